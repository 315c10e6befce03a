import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { optionsNpmTook } from "../../tools/cli/program";
import { setTemplatePath, template } from "../../tools/simulate/templates";

/** A command with the options of `npm start` that npm would take for its own. */
const start = () =>
  new Command("start").option("--port <port>").option("--state-dir <dir>").option("--no-console");

describe("what the CLI says of a mistake (#61, item 3)", () => {
  it("points an option npm took for itself after --, value or not, only under npm", () => {
    expect(optionsNpmTook(start(), ["3005"], { npm_lifecycle_event: "start", npm_config_port: "true" })).toBe(
      "npm took --port for itself: options go after --, as in npm start -- --port 3005",
    );
    expect(
      optionsNpmTook(start(), [], {
        npm_lifecycle_event: "simulate",
        npm_config_state_dir: "x",
        npm_config_console: "",
      }),
    ).toBe(
      "npm took --state-dir, --console for itself: options go after --, as in npm run simulate -- --state-dir x --no-console",
    );
    expect(optionsNpmTook(start(), ["3005"], { npm_config_port: "true" })).toBeUndefined();
    expect(optionsNpmTook(start(), [], { npm_lifecycle_event: "start" })).toBeUndefined();
  });

  it("sets a template's field by its path, and refuses one it does not have, naming the nearest", () => {
    const event = template("group_created");
    setTemplatePath("group_created", event, "data.group.name", "Climbers");
    expect(event.data.group.name).toBe("Climbers");
    expect(() => setTemplatePath("group_created", event, "data.group.nmae", "X")).toThrow(
      /^data\.group\.nmae is not a field of the group_created template \(did you mean data\.group\.name\?\)/,
    );
    expect(event.data.group.nmae).toBeUndefined();
  });
});
