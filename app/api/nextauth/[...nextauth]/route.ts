// next-auth's routes for the web UI's browser session (csrf, callback/credentials, session, signout)
import { handlers } from "@/lib/auth/nextauth";

export const { GET, POST } = handlers;
