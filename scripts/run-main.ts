/**
 * Runs a command's `main` and sets the process exit code from it. exitCode rather than exit() lets
 * piped stdout and stderr drain first; an unexpected error is one line and exit code 1.
 */
export function runMain(main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
