import "server-only";
import NextAuth, { CredentialsSignin } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { z } from "zod";
import { now } from "@/lib/clock";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { emailField } from "@/lib/schemas/accounts";
import { accountForAccessToken, type AuthenticatedAccount } from "./authenticate";

/**
 * Checks an email and password (the account service's, with its throttle), throwing an AppError when refused.
 * Handed in by the route so that this adapter does not import the services above it (app → services → auth).
 */
export type PasswordCheck = (email: string, password: string, req: Request) => Promise<AuthenticatedAccount>;

/** Tells the sign-in form why (`?code=` on next-auth's redirect, `code` in `signIn()`'s result). */
class SignInRefused extends CredentialsSignin {
  constructor(code: string) {
    super();
    this.code = code;
  }
}

const passwordCredentials = z.object({ email: emailField, password: z.string().min(1).max(1024) });
const tokenCredentials = z.object({ accessToken: z.string().min(1).max(4096) });

/**
 * Either `{ email, password }` (the same service and throttle as POST /api/auth/login) or `{ accessToken }`
 * (a valid access token, so the UI can open a session right after verify-email).
 */
async function authorize(checkPassword: PasswordCheck, credentials: Partial<Record<string, unknown>>, req: Request) {
  try {
    const byToken = tokenCredentials.safeParse(credentials);
    if (byToken.success && !credentials.email) {
      const account = await accountForAccessToken(byToken.data.accessToken);
      return { id: account.id, email: account.email, name: account.fullName };
    }
    const byPassword = passwordCredentials.safeParse(credentials);
    if (!byPassword.success) throw new SignInRefused("invalid_credentials");
    const account = await checkPassword(byPassword.data.email, byPassword.data.password, req);
    return { id: account.id, email: account.email, name: account.fullName };
  } catch (error) {
    if (error instanceof AppError) throw new SignInRefused(error.code === "token_expired" ? "invalid_token" : error.code);
    throw error;
  }
}

/**
 * next-auth's route handlers. The config is built per request so that AUTH_SECRET comes from getConfig()
 * (generated in .data in development).
 */
export function nextAuthHandlers(checkPassword: PasswordCheck) {
  return NextAuth(() => ({
    basePath: "/api/nextauth",
    secret: getConfig().authSecret,
    trustHost: true,
    session: { strategy: "jwt", maxAge: 30 * 24 * 3600 },
    pages: { signIn: "/login" },
    // A refused sign-in is an expected answer, not a server error: keep it out of the error log.
    logger: {
      error: (error: Error) => {
        if (error.name !== "CredentialsSignin") log.error("next-auth error", { error });
      },
      warn: (code: string) => log.warn("next-auth warning", { code }),
      debug: () => {},
    },
    providers: [
      Credentials({
        id: "credentials",
        name: "Email and password",
        credentials: { email: {}, password: {}, accessToken: {} },
        authorize: (credentials, req) => authorize(checkPassword, credentials, req),
      }),
    ],
    callbacks: {
      // `authTime` survives every re-encoding of the cookie; authenticate() compares it with passwordChangedAt.
      jwt({ token, user }) {
        if (user?.id) {
          token.sub = user.id;
          token.authTime = now();
        }
        return token;
      },
      session({ session, token }) {
        if (token.sub) session.user.id = token.sub;
        return session;
      },
    },
  })).handlers;
}
