// Values serverless.yml takes from {config_dir}/config.yaml at packaging time (no secrets):
// the configuration's hash (`hookagent status` compares it with the local file), the stage,
// region and table names the CLI acts on (`aws`), so the deployment lands where the CLI
// looks, and the Bedrock resources the worker may invoke (agent.model and agent.models).
// A file that does not parse counts as empty here: these run while serverless.yml's
// variables resolve, where a thrown error ends in a stack trace; the build plugin's
// validator (infra/build-plugin.cjs) reports it, with its key path, right after.
const { createHash } = require('node:crypto');
const { readdirSync, readFileSync } = require('node:fs');
const { homedir } = require('node:os');
const { join } = require('node:path');
const yaml = require('js-yaml');

const configDir = () => process.env.HOOKAGENT_CONFIG_DIR || join(homedir(), '.hookagent');

function configText(dir = configDir()) {
  try {
    return readFileSync(join(dir, 'config.yaml'), 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return '';
    throw error;
  }
}

/** A user skill's name, as functions/core/skills/skill.ts's SKILL_NAME. */
const SKILL_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * What packaging deploys from the config dir, as one sha256 (`hookagent status` compares it,
 * through deploymentHash, with the local files): config.yaml's bytes (an empty file when
 * there is none), then each user skill (`skills/<name>/SKILL.md`, by name) that packaging
 * bundles into the worker. With no user skill it is config.yaml's hash alone, as it was
 * before skills counted, so such a deployment does not show drift after an upgrade.
 */
function configHash(text = configText(), dir = configDir()) {
  const hash = createHash('sha256').update(text);
  const skillsDir = join(dir, 'skills');
  let names = [];
  try {
    names = readdirSync(skillsDir, { withFileTypes: true }).filter((e) => e.isDirectory() && SKILL_NAME.test(e.name)).map((e) => e.name).sort();
  } catch (error) {
    if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
  }
  for (const name of names) {
    let skill;
    try {
      skill = readFileSync(join(skillsDir, name, 'SKILL.md'));
    } catch (error) {
      if (error.code === 'ENOENT') continue;
      throw error;
    }
    hash.update(`\0skill\0${name}\0`).update(skill);
  }
  return hash.digest('hex');
}

/** configHash of the config dir `dir`. */
const deploymentHash = (dir) => configHash(configText(dir), dir);

/** config.yaml as an object ({} when absent); `${VAR}` references become `__ref_VAR__` (resolved at run time, here they only need to parse). */
function parse(text) {
  const value = text.trim() ? yaml.load(text.replace(/\$\{(\w+)\}/g, '__ref_$1__')) : {};
  return value && typeof value === 'object' ? value : {};
}

/** parse(), or {} when the file does not parse (the validator reports it). */
function parsedOrEmpty(text = configText()) {
  try {
    return parse(text);
  } catch {
    return {};
  }
}

const literal = (value) => typeof value === 'string' && value.length > 0 && !value.includes('__ref_') ? value : undefined;

/** Resources for bedrock:InvokeModel of one model id (see bedrockResources). */
function modelResources(model, region) {
  if (model.startsWith('arn:')) return [model];
  const profile = /^(us|eu|apac|us-gov|ca|jp|au|global)\.(.+)$/.exec(model);
  if (profile) {
    return [
      { 'Fn::Sub': `arn:\${AWS::Partition}:bedrock:${region || '${AWS::Region}'}:\${AWS::AccountId}:inference-profile/${model}` },
      { 'Fn::Sub': `arn:\${AWS::Partition}:bedrock:*::foundation-model/${profile[2]}` },
    ];
  }
  return [{ 'Fn::Sub': `arn:\${AWS::Partition}:bedrock:${region || '${AWS::Region}'}::foundation-model/${model}` }];
}

/**
 * Resources for bedrock:InvokeModel: for agent.model and each of agent.models (the models a
 * subscription may name with --model), a foundation model id (`anthropic.claude-…`) in the
 * stage's region; a cross-region inference profile id (`us.anthropic.claude-…`) plus the
 * foundation model in every region the profile routes to; an ARN as given. `[]` when the
 * provider is not Bedrock (the statement is then left out). Throws when a model is
 * missing or a ${VAR} reference (the validator, functions/aws/limits.ts, says so first).
 */
function bedrockResources(text = configText()) {
  const agent = parse(text).agent || {};
  if (agent.provider !== 'bedrock') return [];
  const models = [agent.model, ...(Array.isArray(agent.models) ? agent.models : [])];
  if (!models.every(literal)) throw new Error('agent.model and agent.models must name the Bedrock models literally so the worker can be allowed those models only');
  const seen = new Set();
  return models.flatMap((model) => modelResources(model, agent.region)).filter((r) => {
    const key = JSON.stringify(r);
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/** The Bedrock resources, or none when the configuration cannot say (packaging stops at its validation). */
function bedrockResourcesOrNone() {
  try {
    return bedrockResources();
  } catch {
    return [];
  }
}

/** `aws.tables` as written: only the names config.yaml gives (serverless.yml falls back to hookagent-<stage>-…). */
function tables(text = configText()) {
  const written = (parsedOrEmpty(text).aws || {}).tables || {};
  return Object.fromEntries(['subscriptions', 'dedup', 'events'].flatMap((key) => (literal(written[key]) ? [[key, written[key]]] : [])));
}

const awsValue = (key) => literal(String((parsedOrEmpty().aws || {})[key] ?? '')) ?? null;

module.exports = {
  configHash: () => configHash(),
  // null when config.yaml does not say: serverless.yml's next fallback applies.
  stage: () => awsValue('stage'),
  region: () => awsValue('region'),
  tables: () => tables(),
  usesBedrock: () => String(bedrockResourcesOrNone().length > 0),
  bedrockResources: () => {
    const resources = bedrockResourcesOrNone();
    // CloudFormation needs a resource even in the branch Fn::If leaves out.
    return resources.length > 0 ? resources : ['arn:aws:bedrock:none::foundation-model/none'];
  },
  deploymentHash,
  computeBedrockResources: bedrockResources,
  computeTables: tables,
};
