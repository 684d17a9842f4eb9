/** The values by key, each group in the values' order, the groups in the order their keys first appear. */
export const groupBy = <T, K = string>(values: readonly T[], keyOf: (value: T) => K): Map<K, T[]> => {
  const groups = new Map<K, T[]>();
  for (const value of values) {
    const key = keyOf(value);
    const group = groups.get(key);
    if (group) group.push(value);
    else groups.set(key, [value]);
  }
  return groups;
};
