// Values serverless.yml takes from {config_dir}/config.yaml at packaging time (no secrets):
// the configuration's hash (`hookagent status` compares it with the local file) and the
// Bedrock resources the worker may invoke (the configured model and its inference profile).
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { homedir } = require('node:os');
const { join } = require('node:path');
const yaml = require('js-yaml');

function configText() {
  const dir = process.env.HOOKAGENT_CONFIG_DIR || join(homedir(), '.hookagent');
  try {
    return readFileSync(join(dir, 'config.yaml'), 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return '';
    throw error;
  }
}

/** sha256 of config.yaml's bytes (empty file when there is none), as cli/status.ts computes it. */
function configHash(text = configText()) {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Resources for bedrock:InvokeModel: a foundation model id (`anthropic.claude-…`) in the
 * stage's region; a cross-region inference profile id (`us.anthropic.claude-…`) plus the
 * foundation model in every region the profile routes to; an ARN as given. `[]` when the
 * provider is not Bedrock (the statement is then left out).
 */
function bedrockResources(text = configText()) {
  // ${VAR} references are resolved at run time; here they only need to parse.
  const config = (text.trim() ? yaml.load(text.replace(/\$\{(\w+)\}/g, '__ref_$1__')) : {}) || {};
  const agent = config.agent || {};
  if (agent.provider !== 'bedrock') return [];
  const model = String(agent.model || '');
  if (!model || model.includes('__ref_')) throw new Error('agent.model must name the Bedrock model literally so the worker can be allowed that model only');
  if (model.startsWith('arn:')) return [model];
  const profile = /^(us|eu|apac|us-gov|ca|jp|au|global)\.(.+)$/.exec(model);
  if (profile) {
    return [
      { 'Fn::Sub': `arn:\${AWS::Partition}:bedrock:${agent.region || '${AWS::Region}'}:\${AWS::AccountId}:inference-profile/${model}` },
      { 'Fn::Sub': `arn:\${AWS::Partition}:bedrock:*::foundation-model/${profile[2]}` },
    ];
  }
  return [{ 'Fn::Sub': `arn:\${AWS::Partition}:bedrock:${agent.region || '${AWS::Region}'}::foundation-model/${model}` }];
}

module.exports = {
  configHash: () => configHash(),
  usesBedrock: () => String(bedrockResources().length > 0),
  bedrockResources: () => {
    const resources = bedrockResources();
    // CloudFormation needs a resource even in the branch Fn::If leaves out.
    return resources.length > 0 ? resources : ['arn:aws:bedrock:none::foundation-model/none'];
  },
  computeConfigHash: configHash,
  computeBedrockResources: bedrockResources,
};
