import { vi } from "vitest";
vi.resetModules();
