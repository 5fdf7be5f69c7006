// Preloaded into serve (NODE_OPTIONS=--require) by the clock-step tests: shifts this process's
// wall clock (Date) by the milliseconds in $CLOCK_SHIFT_FILE, re-read every 20 ms, as an NTP
// step or a resumed VM does. The monotonic clock (performance.now) is left alone, as a step
// leaves it. Each shift applied is written to `$CLOCK_SHIFT_FILE.applied`, so a test knows
// when serve's clock has stepped.
const fs = require('node:fs');
const file = process.env.CLOCK_SHIFT_FILE;
let offset = 0;
const read = () => {
  let next = 0;
  try {
    next = Number(fs.readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    next = 0;
  }
  if (next === offset) return;
  offset = next;
  fs.writeFileSync(`${file}.applied`, String(offset));
};
read();
setInterval(read, 20).unref();
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + offset);
    else super(...args);
  }
  static now() {
    return realNow() + offset;
  }
}
globalThis.Date = ShiftedDate;
