import { FilterPolicyUnsupportedError } from "@webhook-backend/stream/filter-policy";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { expectedMessage, NO_REGION_MESSAGE, optionsNpmTook } from "../../tools/cli/program";
import { setTemplatePath, template } from "../../tools/simulate/templates";

/** A command with the options of `npm start` that npm would take for its own. */
const start = () =>
  new Command("start").option("--port <port>").option("--state-dir <dir>").option("--no-console");

describe("what the CLI says of a mistake (#61, item 3)", () => {
  it("points an option npm took for itself after --, value or not, only under npm", () => {
    expect(
      optionsNpmTook(start(), ["3005"], {
        npm_lifecycle_event: "start",
        npm_lifecycle_script: "node --import tsx tools/commands/start.ts",
        npm_config_port: "true",
      }),
    ).toBe("npm took --port for itself: options go after --, as in npm start -- --port 3005");
    expect(
      optionsNpmTook(start(), [], {
        npm_lifecycle_event: "simulate",
        npm_lifecycle_script: "node --import tsx tools/commands/start.ts",
        npm_config_state_dir: "x",
        npm_config_console: "",
      }),
    ).toBe(
      "npm took --state-dir, --console for itself: options go after --, as in npm run simulate -- --state-dir x --no-console",
    );
    expect(optionsNpmTook(start(), ["3005"], { npm_config_port: "true" })).toBeUndefined();
    expect(optionsNpmTook(start(), [], { npm_lifecycle_event: "start" })).toBeUndefined();
    // A command another script runs (`npm test`'s tests: npm sets npm_config_yes for them) was not
    // typed after npm: found by the whole suite, where every forget answered "npm took --yes".
    expect(
      optionsNpmTook(start(), [], {
        npm_lifecycle_event: "test",
        npm_lifecycle_script: "npm run lint && vitest run",
        npm_config_port: "true",
      }),
    ).toBeUndefined();
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

  it("says in one line what to set when the SDK has no region, and a filter policy a replay cannot evaluate is a refusal, not a crash (item 7)", () => {
    expect(expectedMessage(new Error("Region is missing"))).toBe(NO_REGION_MESSAGE);
    expect(NO_REGION_MESSAGE).toContain("AWS_REGION");
    expect(
      expectedMessage(new Error('Region not accepted: region="" is not a valid hostname component.')),
    ).toBe(
      'Region not accepted: region="" is not a valid hostname component: set AWS_REGION to one, such as eu-west-1',
    );
    const refused = new FilterPolicyUnsupportedError(
      "the filter policy holds a condition this replay cannot evaluate",
    );
    expect(expectedMessage(refused)).toBe("the filter policy holds a condition this replay cannot evaluate");
    // Anything else keeps its stack: a bug.
    expect(expectedMessage(new TypeError("x is undefined"))).toContain("at ");
  });
});
