const summary = require('./summary.cjs');
const tempDir = require('../support/temp-dir.cjs');

module.exports = async (...args) => {
  await tempDir.setup();
  await summary.setup(...args);
};
