import "server-only";
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";
import { AppError } from "@/lib/errors";

/**
 * zxcvbn scores 0–4 by estimated guesses: 0 and 1 (under ~10^6 guesses: the common-password list, keyboard runs,
 * dates, a common word with a digit) are refused (ASVS 6.2.4); 2 and above pass, so a long phrase of plain words is
 * fine. The dictionaries (~1 MB of word lists) load on first use, once per process.
 */
const MIN_PASSWORD_SCORE = 2;

let estimator: Promise<ZxcvbnFactory> | undefined;

function loadEstimator(): Promise<ZxcvbnFactory> {
  estimator ??= (async () => {
    const [{ ZxcvbnFactory }, common] = await Promise.all([import("@zxcvbn-ts/core"), import("@zxcvbn-ts/language-common")]);
    return new ZxcvbnFactory({ dictionary: { ...common.dictionary }, graphs: common.adjacencyGraphs });
  })();
  return estimator;
}

/** Throws 422 `validation_failed` (path `password` or `newPassword`) with a sentence saying why the password is weak. */
export async function assertStrongPassword(password: string, userInputs: string[] = [], path = "password"): Promise<void> {
  const zxcvbn = await loadEstimator();
  // Long inputs cost matching time for nothing: 64 characters decide the score.
  const result = zxcvbn.check(password.slice(0, 64), userInputs.flatMap((input) => input.toLowerCase().split(/[^a-z0-9]+/)).filter((w) => w.length >= 3));
  if (result.score >= MIN_PASSWORD_SCORE) return;
  const why = result.feedback.warning ? WARNINGS[result.feedback.warning] ?? "it is easy to guess" : "it is easy to guess";
  const message = `This password is too common or too easy to guess (${why}): choose a longer phrase of unrelated words.`;
  throw new AppError("validation_failed", message, { errors: [{ path, code: "weak_password", message }] });
}

const WARNINGS: Record<string, string> = {
  topTen: "it is one of the ten most used passwords",
  topHundred: "it is one of the hundred most used passwords",
  common: "it is on the list of commonly used passwords",
  similarToCommon: "it is a small change of a commonly used password",
  wordByItself: "a single word is easy to guess",
  namesByThemselves: "a name by itself is easy to guess",
  commonNames: "common names are easy to guess",
  userInputs: "it contains your name or email address",
  straightRow: "it is a row of keys on the keyboard",
  keyPattern: "it is a short keyboard pattern",
  simpleRepeat: "it repeats a few characters",
  extendedRepeat: "it repeats a short pattern",
  sequences: "it is a simple sequence like abc or 1234",
  recentYears: "it contains a recent year",
  dates: "it contains a date",
};
