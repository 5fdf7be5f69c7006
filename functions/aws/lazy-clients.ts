/**
 * SSM and S3 clients created on first use, not at start: S3 is needed only for payloads
 * over the queue's limit (ingest) or for events that carry a pointer (worker); SSM only
 * for secrets the environment does not hold.
 *
 * Their modules are imported statically on purpose. Measured (README, "Cold starts"):
 * loading them through a dynamic `import()` makes esbuild wrap the deferred modules and give
 * up tree-shaking inside them (every SSM schema and the aggregated client stay): the ingest
 * bundle grew from 758 KB to 887 KB and its module init did not get faster.
 */
import type { PayloadStore, SecretSource } from '../core/ports';
import { s3PayloadStore } from './s3-payload-store';
import { ssmParameterName } from './ssm-names';
import { ssmSecretSource } from './ssm-secrets';

export function lazySecretSource(stage: string, env: NodeJS.ProcessEnv = process.env): SecretSource {
  let source: SecretSource | undefined;
  return {
    async get(name) {
      const fromEnv = env[name];
      if (fromEnv) return fromEnv;
      source ??= ssmSecretSource(stage);
      return source.get(name);
    },
    where: (name) => `or the SSM parameter ${ssmParameterName(stage, name)}: hookagent secrets set ${name} --stage ${stage}`,
  };
}

export function lazyPayloadStore(bucket: string): PayloadStore {
  let store: PayloadStore | undefined;
  return {
    put: (key, body) => (store ??= s3PayloadStore(bucket)).put(key, body),
    get: (pointer) => (store ??= s3PayloadStore(bucket)).get(pointer),
  };
}
