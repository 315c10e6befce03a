import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The import graph's directions, kept by a test (#28): `shared/` in layers with no arrow pointing
// up and no circle, `tools/` with commands on top and what they share below, and the top-level
// folders in one direction. A new module that breaks a direction fails here with the arrow named.

const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * `shared/` from top to bottom. A folder may import its own folder and any folder below it; the
 * capabilities on one row do not import each other.
 */
const SHARED_LAYERS: readonly (readonly string[])[] = [
  ["config"], // the functions' configuration: the wiring layer that knows every capability
  // The stream of facts (#41): subscribers and their filters, the envelope, the publisher. Above
  // the capabilities: the projector publishes through its own port (`projector/fact-stream.ts`),
  // which the handler fills with the stream's, and the consumers' fold is the projector's core.
  ["stream"],
  ["ingest", "projector", "recorder", "reconcile", "erasure", "imports"], // erasure: forget, over the archive and the tables; imports: the platform's data import
  ["apps"], // per-app settings: the allowlist the ingest reads, the platform's management API
  ["analytics"], // the activity figures: their SQL, engines and store (the projector archives for it)
  ["adapters"],
  ["ports"],
  ["projections"],
  ["events"],
  ["contracts"],
  ["platform"],
];

/** `tools/` from top to bottom (`.` is tools/target.ts: where the commands point). */
const TOOLS_LAYERS: readonly (readonly string[])[] = [
  ["commands"], // one entry file per command
  ["console", "contract"], // contract: the stream's published contract, generated (#51)
  ["simulate"],
  ["query"],
  ["ops"],
  ["analytics"],
  ["."],
  ["local"],
  ["cli"], // what every command shares: options, formatting, event ids
];

/** Which top-level folders each may import (besides itself). */
const TOP_LEVEL: Record<string, readonly string[]> = {
  shared: [],
  functions: ["shared"],
  infra: ["shared"],
  tools: ["shared", "functions"], // the local stack runs the handlers unchanged
};

/**
 * The one file of a folder another may import besides `TOP_LEVEL`: the deployment's settings
 * (infra/config.ts, its context keys and their validation), which the local stack applies as a
 * deployment would (its retention windows).
 */
const ALSO: Record<string, readonly string[]> = { tools: ["infra/config"] };

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return name === "node_modules" ? [] : sourceFiles(path);
    return /\.(ts|mts)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * The project files a source file imports (static and dynamic imports, `export … from`); a
 * folder's import is its `index.ts` (its public face), so that a circle through it is seen.
 */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), "utf8"), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => normalize(join(dirname(file), name)).replace(/\.(m?js|m?ts)$/, ""))
    .map((path) =>
      existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isDirectory() ? `${path}/index` : path,
    );
}

interface Arrow {
  from: string;
  to: string;
}

function arrows(dirs: readonly string[]): Arrow[] {
  return dirs.flatMap((dir) =>
    sourceFiles(dir).flatMap((from) =>
      importsOf(from).map((to) => ({ from: from.replace(/\.m?ts$/, ""), to })),
    ),
  );
}

/** The folder of a path inside `root` (`.` for a file directly in it). */
function folderIn(root: string, path: string): string {
  const rel = relative(root, path);
  return rel.includes("/") ? (rel.split("/")[0] ?? ".") : ".";
}

function layerViolations(root: string, layers: readonly (readonly string[])[]): string[] {
  const rank = new Map(layers.flatMap((row, i) => row.map((folder) => [folder, i] as const)));
  return arrows([root])
    .filter(({ to }) => !relative(root, to).startsWith(".."))
    .flatMap(({ from, to }) => {
      const a = folderIn(root, from);
      const b = folderIn(root, to);
      if (a === b) return [];
      const ra = rank.get(a);
      const rb = rank.get(b);
      if (ra === undefined || rb === undefined)
        return [`${from} -> ${to}: folder not in the declared layers`];
      return rb > ra ? [] : [`${from} -> ${to}: ${a} may not import ${b}`];
    });
}

/** The circles among files (strongly connected components of more than one file), Tarjan's. */
function circlesOf(edges: readonly Arrow[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const { from, to } of edges) graph.set(from, [...(graph.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

describe("import directions", () => {
  it("shared/: every arrow points down its layers", () => {
    expect(layerViolations("shared", SHARED_LAYERS)).toEqual([]);
  });

  it("tools/: commands on top, what they share below, no arrow pointing up", () => {
    expect(layerViolations("tools", TOOLS_LAYERS)).toEqual([]);
  });

  it("no circle among the files of shared/, tools/, functions/ and infra/", () => {
    expect(circlesOf(arrows(["shared", "tools", "functions", "infra"]))).toEqual([]);
  });

  it("the top-level folders import in one direction", () => {
    const wrong = arrows(Object.keys(TOP_LEVEL)).flatMap(({ from, to }) => {
      const a = from.split("/")[0] ?? "";
      const b = to.split("/")[0] ?? "";
      return a === b || TOP_LEVEL[a]?.includes(b) || ALSO[a]?.includes(to) ? [] : [`${from} -> ${to}`];
    });
    expect(wrong).toEqual([]);
  });

  it("reads the imports, and finds an arrow pointing up and a circle (the checks can fail)", () => {
    // Prepare: the layers upside down; a circle of three files beside a file that is in none.
    const upsideDown = [...SHARED_LAYERS].reverse();
    const edges = [
      { from: "a", to: "b" },
      { from: "b", to: "c" },
      { from: "c", to: "a" },
      { from: "c", to: "d" },
    ];
    // Act / Assess
    expect(arrows(["shared"]).length).toBeGreaterThan(150);
    expect(layerViolations("shared", upsideDown).length).toBeGreaterThan(50);
    expect(circlesOf(edges)).toEqual([["a", "b", "c"]]);
  });
});
