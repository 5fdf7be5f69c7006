/**
 * Which AWS deployment a command acts on (stage, region) and its tables: read the way
 * `npx osls deploy` reads the same options and config.yaml, so the CLI looks where the
 * stack landed.
 */
import { tableNamesForStage, type TableNames } from '../functions/aws/tables';
import type { Config } from '../functions/core/config/types';
import type { GlobalOptions } from './context';

/** serverless.yml's last provider.region fallback (osls' default too): where a stack goes without --region or aws.region. */
export const DEFAULT_REGION = 'us-east-1';

export interface AwsDeployment {
  stage: string;
  region: string;
  /** What named the region: --region, config.yaml's aws.region, or neither (DEFAULT_REGION). */
  regionFrom: 'option' | 'config' | 'default';
}

/**
 * The AWS deployment the CLI acts on (--stage, else the `aws` section), if any, in the region
 * `npx osls deploy` puts it with the same options: --region, else aws.region, else DEFAULT_REGION;
 * never the SDK's choice (AWS_REGION, the profile's), which osls does not use either. As packaging
 * reads it (infra/deploy-config.cjs), only a literal aws.region counts, not a `${VAR}` reference.
 */
export function awsDeployment(config: Config, options: GlobalOptions): AwsDeployment | undefined {
  const stage = options.stage ?? config.aws?.stage;
  if (!stage) return undefined;
  if (options.region !== undefined) return { stage, region: options.region, regionFrom: 'option' };
  const written = config.aws?.region;
  return written && !written.includes('${') ? { stage, region: written, regionFrom: 'config' } : { stage, region: DEFAULT_REGION, regionFrom: 'default' };
}

/**
 * `--region` names the region of a deployment: with no stage (no --stage, no `aws` section)
 * there is none, and dropping it would act on the local store instead.
 */
export function regionWithoutStage(config: Config, options: GlobalOptions): string | undefined {
  if (options.region === undefined || awsDeployment(config, options)) return undefined;
  return "--region picks the region of an AWS deployment: pass --stage <stage> too (npx osls deploy's default is dev), or add aws: { stage, region } to config.yaml";
}

/**
 * The tables of stage `stage`: config.yaml's `aws.tables` names those of `aws.stage` only
 * (packaging another stage with them is refused: infra/build-plugin.cjs); any other stage's
 * are hookagent-<stage>-*. Everything that opens a deployment's stores names them here.
 */
export function deploymentTables(config: Config, stage: string): TableNames {
  return tableNamesForStage(stage, stage === config.aws?.stage ? config.aws.tables ?? {} : {});
}
