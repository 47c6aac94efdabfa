// Moved to lib/http/pagination.ts (shared by every list); kept for the lists that still import it from here.
export { cursorDate } from "@/lib/http/pagination";
