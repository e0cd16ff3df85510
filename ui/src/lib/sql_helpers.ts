// The SQL helpers strata expands in every query (docs/sql.md, "Helpers"):
// one attribute of the row by key, in three families. The SQL page lists
// them and offers them as completions; the browser test runs each one
// against the server, so this list cannot drift from what it accepts.

export interface SqlHelper {
  name: string;
  type: string;
  info: string;
}

const FAMILIES: readonly [string, string][] = [
  ['attr', "the row's attributes"],
  ['resource_attr', "the resource's attributes"],
  ['scope_attr', "the instrumentation scope's attributes"],
];

const KINDS: readonly [string, string, string][] = [
  ['', 'VARCHAR', 'a string as it is, any other type as JSON text; NULL when absent'],
  ['_str', 'VARCHAR', 'the value when it is a string'],
  ['_int', 'BIGINT', 'the value when it is an int'],
  ['_double', 'DOUBLE', 'the value when it is a double'],
  ['_bool', 'BOOLEAN', 'the value when it is a bool'],
  ['_json', 'JSON', 'the value as JSON, maps and arrays included'],
];

export const SQL_HELPERS: readonly SqlHelper[] = FAMILIES.flatMap(([family, of]) => [
  ...KINDS.map(([suffix, type, what]) => ({
    name: `${family}${suffix}`,
    type,
    info: `${family}${suffix}(key): from ${of}, ${what}`,
  })),
  { name: `has_${family}`, type: 'BOOLEAN', info: `has_${family}(key): the key is among ${of}` },
]);
