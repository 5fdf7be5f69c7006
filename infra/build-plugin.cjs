// A local serverless plugin: before packaging, build the Lambda bundles and check
// {config_dir}/config.yaml (HOOKAGENT_CONFIG_DIR, else ~/.hookagent) against AWS's limits.
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

class BuildLambdaBundles {
  constructor(serverless) {
    const root = serverless.serviceDir ?? process.cwd();
    const build = () => execFileSync(process.execPath, [join(root, 'scripts', 'build-lambda.mjs')], { cwd: root, stdio: 'inherit' });
    this.hooks = {
      'before:package:createDeploymentArtifacts': build,
      'before:deploy:function:packageFunction': build,
    };
  }
}

module.exports = BuildLambdaBundles;
