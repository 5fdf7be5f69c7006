// A local serverless plugin: before packaging, build the Lambda bundles and check
// {config_dir}/config.yaml (HOOKAGENT_CONFIG_DIR, else ~/.hookagent) against AWS's limits.
// Its errors are serverless errors: one clear message, no stack trace.
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');
const deployConfig = require('./deploy-config.cjs');

/** `--param="name=value"` options as given on the command line. */
function param(options, name) {
  const given = [options.param ?? []].flat().map(String).find((p) => p.startsWith(`${name}=`));
  return given?.slice(name.length + 1);
}

class BuildLambdaBundles {
  constructor(serverless, options = {}, { log } = {}) {
    const root = serverless.serviceDir ?? process.cwd();
    const warn = (text) => (log?.warning ? log.warning(text) : process.stderr.write(`warning: ${text}\n`));
    const build = () => {
      // The CLI acts on config.yaml's aws.stage/aws.region: a deployment elsewhere is one it does not see by itself.
      const { stage, region } = serverless.service.provider;
      for (const [key, used] of [['stage', stage], ['region', region]]) {
        const written = deployConfig[key]();
        if (written && used && written !== used) {
          warn(`packaging for ${key} '${used}', but config.yaml's aws.${key} is '${written}': the CLI acts on '${written}' unless given --${key} ${used}`);
        }
      }
      const writtenStage = deployConfig.stage();
      if (writtenStage && stage !== writtenStage && Object.keys(deployConfig.tables()).length > 0) {
        // Its tables are that stage's: a second stage would need the same names (and the CLI would mix the two).
        throw new serverless.classes.Error(`config.yaml's aws.tables names the tables of stage '${writtenStage}'; packaging stage '${stage}' would use the same tables. Package --stage ${writtenStage}, or use a config directory without aws.tables (HOOKAGENT_CONFIG_DIR) for '${stage}'.`);
      }
      const args = [join(root, 'scripts', 'build-lambda.mjs')];
      if (param(options, 'allowEmptyConfig') !== 'true') args.push('--require-config');
      const built = spawnSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
      const said = (built.stderr ?? '').trim();
      if (built.status !== 0) throw new serverless.classes.Error(said || `Building the Lambda bundles failed (${built.error?.message ?? `exit ${built.status}`})`);
      if (said) process.stderr.write(`${said}\n`);
    };
    this.hooks = {
      'before:package:createDeploymentArtifacts': build,
      'before:deploy:function:packageFunction': build,
    };
  }
}

module.exports = BuildLambdaBundles;
