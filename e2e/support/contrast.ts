import type { Page } from "@playwright/test";

export type ContrastMiss = { text: string; ratio: number; needed: number; color: string; background: string; where: string };

/**
 * WCAG 2 contrast of every visible piece of text on the page (axe's rule in brief): the text colour over the
 * background made by compositing every ancestor's background colour down to the page, with the relative luminance
 * formula of WCAG 2.1. Large text (24 px, or 18.66 px bold) needs 3:1, other text 4.5:1. Not judged, like axe:
 * disabled controls, text over a background image or gradient, text inside something made translucent (opacity).
 * Colours are read through a canvas, so oklch() and color-mix() resolve like the browser paints them.
 */
export async function contrastMisses(page: Page): Promise<ContrastMiss[]> {
  return page.evaluate(() => {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 1;
    const ctx = canvas.getContext("2d", { willReadFrequently: true })!;
    const rgba = (color: string): [number, number, number, number] => {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = "#000";
      ctx.fillStyle = color;
      ctx.fillRect(0, 0, 1, 1);
      const d = ctx.getImageData(0, 0, 1, 1).data;
      return [d[0], d[1], d[2], d[3] / 255];
    };
    const over = (top: [number, number, number, number], bottom: [number, number, number]): [number, number, number] => [
      top[0] * top[3] + bottom[0] * (1 - top[3]),
      top[1] * top[3] + bottom[1] * (1 - top[3]),
      top[2] * top[3] + bottom[2] * (1 - top[3]),
    ];
    const luminance = ([r, g, b]: [number, number, number]) => {
      const channel = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    const ratio = (a: [number, number, number], b: [number, number, number]) => {
      const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (l1 + 0.05) / (l2 + 0.05);
    };
    const describe = (el: Element) => {
      const parts: string[] = [];
      for (let e: Element | null = el; e && parts.length < 3; e = e.parentElement) {
        const id = e.getAttribute("data-testid");
        parts.unshift(id ? `${e.tagName.toLowerCase()}[data-testid=${id}]` : e.tagName.toLowerCase());
      }
      return parts.join(" > ");
    };
    const canvasColor: [number, number, number] = document.documentElement.classList.contains("dark") ? [18, 18, 18] : [255, 255, 255];
    const misses: { text: string; ratio: number; needed: number; color: string; background: string; where: string }[] = [];
    const seen = new Set<string>();
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      const own = Array.from(el.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== "");
      if (own.length === 0 || ["SCRIPT", "STYLE", "OPTION", "NOSCRIPT", "TITLE"].includes(el.tagName)) continue;
      const rect = el.getBoundingClientRect();
      if (rect.width <= 1 || rect.height <= 1) continue;
      const style = getComputedStyle(el);
      if (style.visibility !== "visible" || style.display === "none") continue;
      if (el.closest("[disabled], [aria-disabled=true], [aria-hidden=true]")) continue;
      let translucent = false;
      let image = false;
      const layers: [number, number, number, number][] = [];
      for (let e: Element | null = el; e; e = e.parentElement) {
        const s = getComputedStyle(e);
        if (Number(s.opacity) < 1) translucent = true;
        if (s.backgroundImage !== "none") image = true;
        const bg = rgba(s.backgroundColor);
        if (bg[3] > 0) layers.push(bg);
        if (bg[3] === 1) break;
      }
      if (translucent || image) continue;
      let background = canvasColor;
      for (const layer of layers.reverse()) background = over(layer, background);
      const fg = over(rgba(style.color), background);
      const size = parseFloat(style.fontSize);
      const bold = Number(style.fontWeight) >= 700;
      const needed = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      const value = ratio(fg, background);
      const text = own.map((n) => n.textContent!.trim()).join(" ").slice(0, 60);
      const key = `${text}|${style.color}|${background.join(",")}`;
      if (value + 0.005 < needed && !seen.has(key)) {
        seen.add(key);
        misses.push({
          text,
          ratio: Math.round(value * 100) / 100,
          needed,
          color: style.color,
          background: `rgb(${background.map((v) => Math.round(v)).join(" ")})`,
          where: describe(el),
        });
      }
    }
    return misses;
  });
}

/** Elements sticking out past the right edge of the viewport (not inside a box that scrolls or clips sideways). */
export async function sidewaysOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 || rect.right <= width + 1) continue;
      let clipped = false;
      for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
        const s = getComputedStyle(e);
        if (s.overflowX !== "visible" || s.position === "fixed") {
          clipped = true;
          break;
        }
      }
      if (clipped) continue;
      const id = el.getAttribute("data-testid");
      out.push(`${el.tagName.toLowerCase()}${id ? `[data-testid=${id}]` : ""}.${String(el.className).slice(0, 60)} right=${Math.round(rect.right)}`);
    }
    return out.slice(0, 20);
  });
}
