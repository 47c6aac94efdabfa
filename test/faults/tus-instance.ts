// One app instance for the two-instance tus test: the upload route handlers over node:http (as `next start` serves
// them) on DATABASE_URL, on an ephemeral port it prints as `listening <url>`. Runs until killed.
import { serveRoutes } from "@/test/support/route-server";
import { UPLOAD_ROUTES } from "@/test/support/tus";

serveRoutes(UPLOAD_ROUTES).then(
  (server) => console.log(`listening ${server.url}`),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
