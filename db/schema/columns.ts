import { timestamp } from "drizzle-orm/pg-core";

/** Every timestamp is stored with time zone and read as a Date. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date", precision: 3 });
export const createdAt = () => ts("created_at").notNull().defaultNow();
