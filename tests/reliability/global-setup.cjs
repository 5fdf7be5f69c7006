module.exports = require('./summary.cjs').setup;
