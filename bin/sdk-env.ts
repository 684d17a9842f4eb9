/** Imported first by the operator commands: the SDK's Node.js 20 notice is for this project, not an operator's output. */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
