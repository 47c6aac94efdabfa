// Opens the embedded database in DATA_DIR=argv[2], the way the server does, then exits. Used by db/client.test.ts.
import { closeDb, getDb } from "@/db/client";

process.env.DATA_DIR = process.argv[2];
delete process.env.DATABASE_URL;

getDb()
  .then(async () => {
    console.log("opened");
    await closeDb();
  })
  .catch((error: Error) => {
    console.log(error.message);
    process.exit(3);
  });
