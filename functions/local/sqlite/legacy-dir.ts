/** The previous local store's directory (dynalite) under the data dir: its presence means a migration is due (migrate-dynalite.ts). */
export const LEGACY_DIR = 'dynamo';
