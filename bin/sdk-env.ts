/**
 * Imported first by the operator commands: the AWS SDK's notice that Node.js 20 will lose its
 * support is for this project, not for an operator's output, so it is off before any module
 * builds a client.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
