import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { currentStage } from '#shared/config';
import { type Credential, findCredential } from '#shared/db/merchants';
import { forbidden, MESSAGES, unauthenticated } from '#shared/errors';
import { hashToken, kindOfToken, tokenKindOfStage } from '#shared/tokens';
import type { ApiRoute } from './route';
import { type ApiContext, headerOf } from './types';

const STAGE = currentStage();

/** A resolved credential is cached for AUTH_CACHE_TTL_SECONDS: a revoked token works that much longer. Unknown ones are not cached. */
const CACHE_TTL_MS = Number(process.env.AUTH_CACHE_TTL_SECONDS ?? '30') * 1000;
const cache = new Map<string, { credential: Credential; expiresAt: number }>();

const bearerToken = (event: APIGatewayProxyEvent): string | undefined =>
  headerOf(event, 'authorization')?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];

const resolve = async (tokenHash: string): Promise<Credential | undefined> => {
  const cached = cache.get(tokenHash);
  if (cached && cached.expiresAt > Date.now()) return cached.credential;
  const credential = await findCredential(tokenHash);
  if (credential && CACHE_TTL_MS > 0) cache.set(tokenHash, { credential, expiresAt: Date.now() + CACHE_TTL_MS });
  else cache.delete(tokenHash);
  return credential;
};

export type AuthenticatedContext = ApiContext & { credential: Credential };

/** Bearer-token authentication: the other stage's kind 403, unknown or revoked 401, a live order needs a token allowed to place one. */
export const authentication = ({
  placesOrders,
}: Pick<ApiRoute, 'placesOrders'>): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, AuthenticatedContext> => ({
  before: async (request) => {
    const token = bearerToken(request.event);
    const kind = token ? kindOfToken(token) : undefined;
    if (!token || !kind) throw unauthenticated();
    if (kind !== tokenKindOfStage(STAGE)) throw forbidden(MESSAGES.wrongTokenKind[STAGE]);
    const credential = await resolve(hashToken(token));
    if (!credential) throw unauthenticated();
    if (placesOrders && STAGE === 'live' && !credential.token.canPlaceLiveOrders) throw forbidden(MESSAGES.noLiveOrders);
    request.context.credential = credential;
  },
});
