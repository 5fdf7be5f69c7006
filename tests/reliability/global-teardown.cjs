const summary = require('./summary.cjs');
const tempDir = require('../support/temp-dir.cjs');

module.exports = async (...args) => {
  await summary.teardown(...args);
  await tempDir.teardown();
};
