/**
 * The type of a config.yaml document that passed the schema, derived from schema.ts itself
 * (json-schema-to-ts, types only), so normalise.ts reads typed keys and the schema stays
 * the one description of the file.
 */
import type { FromSchema } from 'json-schema-to-ts';
import type { configSchema } from './schema';

export type RawConfig = FromSchema<typeof configSchema>;
export type RawAgent = NonNullable<RawConfig['agent']>;
