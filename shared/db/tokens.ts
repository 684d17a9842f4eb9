import { createHash, randomBytes } from 'node:crypto';
import type { TokenKind } from '../config';

/**
 * Token strings say their kind in a prefix (`live_` / `test_`) followed by 40 random URL-safe
 * characters. Only the SHA-256 hash is stored.
 */
export const TOKEN_PREFIX: Record<TokenKind, string> = { live: 'live_', testing: 'test_' };

export const kindOfToken = (token: string): TokenKind | undefined =>
  token.startsWith(TOKEN_PREFIX.live) ? 'live' : token.startsWith(TOKEN_PREFIX.testing) ? 'testing' : undefined;

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export const generateToken = (kind: TokenKind): string => `${TOKEN_PREFIX[kind]}${randomBytes(30).toString('base64url')}`;
