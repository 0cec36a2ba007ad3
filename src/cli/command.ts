// The shape of one CLI command. Each command lives in its own file under commands/.

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Raw stdout, no newline added (streamed text); absent when output cannot stream. */
  write?: (text: string) => void;
  /** True when stdout is a terminal (progress bars, streaming). */
  isTty: boolean;
  /**
   * Where stderr is a terminal: draws a one-line status in place (progress while loading), '' clears
   * it; absent otherwise.
   */
  status?: (line: string) => void;
}

export interface Command {
  name: string;
  /** One line: `inspect FILE [--json]`. */
  usage: string;
  summary: string;
  /** Returns the exit status. Throws UsageError for bad arguments, PantheonError for bad input. */
  run(argv: string[], io: CliIo): Promise<number>;
}
