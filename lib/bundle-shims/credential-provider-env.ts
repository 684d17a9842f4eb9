/**
 * Bundling shim, swapped in for `@aws-sdk/credential-provider-node` (esbuild alias, lib/bundling.ts)
 * in deployed functions only: Lambda always hands a function its role's credentials in the
 * environment, so the chain's other sources never run there, yet they are about 100 KB of every
 * bundle. Local runs (tsx) are not bundled and keep the full chain (lib/README.md#functions).
 */
type Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiration?: Date };

export const defaultProvider = (_init?: unknown) => async (): Promise<Credentials> => {
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      'No AWS credentials in the environment (this bundle reads only AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN)',
    );
  }
  const sessionToken = process.env.AWS_SESSION_TOKEN;
  const expiration = process.env.AWS_CREDENTIAL_EXPIRATION;
  return {
    accessKeyId,
    secretAccessKey,
    ...(sessionToken ? { sessionToken } : {}),
    ...(expiration ? { expiration: new Date(expiration) } : {}),
  };
};
