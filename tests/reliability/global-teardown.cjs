module.exports = require('./summary.cjs').teardown;
