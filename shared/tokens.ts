import { createHash, randomBytes } from 'node:crypto';
import type { Stage } from './config';

/** A token says its kind in its prefix, and each stage accepts one kind; only its SHA-256 hash is stored. */
export type TokenKind = 'live' | 'testing';

const TOKEN_PREFIX: Record<TokenKind, string> = { live: 'live_', testing: 'test_' };

export const kindOfToken = (token: string): TokenKind | undefined =>
  token.startsWith(TOKEN_PREFIX.live) ? 'live' : token.startsWith(TOKEN_PREFIX.testing) ? 'testing' : undefined;

export const tokenKindOfStage = (stage: Stage): TokenKind => (stage === 'live' ? 'live' : 'testing');

export const stageOfTokenKind = (kind: TokenKind): Stage => (kind === 'live' ? 'live' : 'sandbox');

/** The stage whose API accepts this token (undefined when it is not a token). */
export const stageOfToken = (token: string): Stage | undefined => {
  const kind = kindOfToken(token);
  return kind === undefined ? undefined : stageOfTokenKind(kind);
};

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export const generateToken = (kind: TokenKind): string => `${TOKEN_PREFIX[kind]}${randomBytes(30).toString('base64url')}`;
