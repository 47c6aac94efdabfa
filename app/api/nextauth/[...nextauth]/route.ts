// next-auth's routes for the web UI's browser session (csrf, callback/credentials, session, signout)
import { nextAuthHandlers } from "@/lib/auth/nextauth";
import { authenticateWithPassword } from "@/lib/services/accounts/login";

export const { GET, POST } = nextAuthHandlers((email, password, req) => authenticateWithPassword(email, password, undefined, { req }));
