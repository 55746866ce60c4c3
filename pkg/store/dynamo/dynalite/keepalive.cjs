// Preloaded into dynalite (node --require) by the test harness. dynalite
// 4.0.0 rethrows the 'aborted' error of a request whose client went away
// mid-request (index.js: req.on('error', function (err) { throw err })),
// which ends the whole process: one test whose deadline cancels a store call
// would take the shared server, and every test after it, down. Such an
// error concerns one connection only; any other uncaught error still ends
// the process, as before.
process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.message === 'aborted')) return;
  console.error(err);
  process.exit(1);
});
