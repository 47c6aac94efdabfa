import { EMAIL_ADDRESS } from "@/lib/schemas/email-address";

export type PastedLineProblem = { line: number; text: string };
export type PastedAddresses = { addresses: string[]; problems: PastedLineProblem[] };

/**
 * Addresses pasted one per line, or separated by commas, semicolons or spaces (a column copied from a sheet),
 * lower-cased and without repeats. Every piece that is not one email address is reported with its line (1-based) and
 * its text, so the paste box can name it instead of the whole batch being refused.
 */
export function parsePastedAddresses(text: string): PastedAddresses {
  const addresses = new Set<string>();
  const problems: PastedLineProblem[] = [];
  text.split(/\r\n|\r|\n/).forEach((line, index) => {
    for (const piece of line.split(/[\s,;]+/)) {
      const address = piece.trim().toLowerCase();
      if (!address) continue;
      if (address.length <= 254 && EMAIL_ADDRESS.test(address)) addresses.add(address);
      else problems.push({ line: index + 1, text: piece.trim() });
    }
  });
  return { addresses: [...addresses], problems };
}

/** "Line 3: "bob@@example" is not an email address." */
export function describeLineProblem(problem: PastedLineProblem): string {
  const shown = Array.from(problem.text).length > 60 ? `${Array.from(problem.text).slice(0, 60).join("")}…` : problem.text;
  return `Line ${problem.line}: "${shown}" is not an email address.`;
}
