import { notFound } from '#shared/errors';

/** The item a read found; none (missing, or another merchant's) is a 404. */
export const orNotFound = async <T>(read: Promise<T | undefined>): Promise<T> => {
  const item = await read;
  if (item === undefined) throw notFound();
  return item;
};
