// A logger is a function that takes one line. Electron main and the harness pass one that prefixes
// and prints; tests pass one that collects lines.

export type Logger = (line: string) => void;

export const consoleLogger = (prefix: string): Logger => (line) => console.error(`[${prefix}] ${line}`);
