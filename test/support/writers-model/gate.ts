import type { MiddlewareStack } from "@smithy/types";

/*
 * The writers model's interleaving points (issue #50): every request a command's core sends
 * through its own SDK clients waits at a gate, and a fast-check scheduler releases one waiting
 * request at a time. The cores need no await point of their own for it: a request is a step.
 *
 * A choice is made only once the system is quiet (no released request still unanswered, no
 * engine query running, a few turns of the event loop): every operation is then either waiting
 * at a gate or done, so the same seed gives the same choices, the same interleaving.
 */

/** What a middleware stack looks like to the gate (every SDK v3 client has one). */
export interface GatedClient<I extends object, O extends object> {
  middlewareStack: MiddlewareStack<I, O>;
}

/**
 * What releases the waiting requests: fast-check's scheduler (`fc.scheduler()`, drawn runs), or a
 * scripted one (`scriptedReleaser`, the defects' fixed sequences).
 */
export interface Releaser {
  schedule<T>(task: Promise<T>, label?: string): Promise<T>;
  count(): number;
  waitOne(): Promise<void>;
}

/**
 * A releaser that picks by a script: `pick` is given the labels waiting (`<actor>: <request>`,
 * oldest first) and returns the index to release. The default releases the oldest first.
 *
 * @example scriptedReleaser((labels) => Math.max(0, labels.findIndex((l) => l.startsWith("1:"))))
 */
export function scriptedReleaser(pick: (labels: readonly string[]) => number = () => 0): Releaser {
  const waiting: Array<{ label: string; release: () => void }> = [];
  return {
    schedule<T>(task: Promise<T>, label = "") {
      return new Promise<void>((release) => waiting.push({ label, release })).then(() => task);
    },
    count: () => waiting.length,
    async waitOne() {
      const index = pick(waiting.map((w) => w.label));
      const [chosen] = waiting.splice(Math.min(Math.max(0, index), waiting.length - 1), 1);
      chosen?.release();
    },
  };
}

/** One operation's steps through the gate: its label, how many it took, and where it crashes. */
export interface Actor {
  label: string;
  steps: number;
  /** Set to a step number: at that step the operation stops for good (a crash; its promise never settles). */
  crashAt?: number;
  /** Resolves when the operation crashed (its own promise never will). */
  crashed: Promise<void>;
  /** Work outside the SDK under way (an engine's query), and requests waiting at the gate. */
  busy: number;
  parked: number;
  signalCrash: () => void;
}

/** An operation of the model, crashing at its `crashAt`-th step when given one. */
export function newActor(label: string, crashAt?: number): Actor {
  let signalCrash = () => {};
  const crashed = new Promise<void>((resolve) => {
    signalCrash = resolve;
  });
  return { label, steps: 0, crashAt, crashed, busy: 0, parked: 0, signalCrash };
}

/**
 * The gate of one run: gated clients' requests are scheduled tasks of `scheduler`; `busy` counts
 * work outside the SDK (an engine's query) so that a choice waits for it.
 */
export function requestGate(scheduler: () => Releaser | undefined) {
  let inFlight = 0;
  const actors = new Set<Actor>();
  const log: string[] = [];
  const running = () => inFlight + [...actors].reduce((n, a) => n + (a.parked === 0 ? a.busy : 0), 0);
  const quiet = async () => {
    for (let calm = 0; calm < 4; ) {
      await new Promise((r) => setImmediate(r));
      calm = running() === 0 ? calm + 1 : 0;
    }
  };
  /** Waits for the scheduler to release this step of `actor` (or forever, past its crash). */
  const step = async (actor: Actor, what: string) => {
    actors.add(actor);
    actor.steps++;
    if (actor.crashAt !== undefined && actor.steps >= actor.crashAt) {
      log.push(`${actor.label} crashed before ${what}`);
      actor.parked++;
      actor.signalCrash();
      await new Promise<never>(() => {});
    }
    const s = scheduler();
    actor.parked++;
    try {
      if (s) await s.schedule(Promise.resolve(), `${actor.label}: ${what}`);
    } finally {
      actor.parked--;
    }
    log.push(`${actor.label}: ${what}`);
    if (process.env.WM_DEBUG) console.error(`step ${actor.label}: ${what}`);
  };
  return {
    log,
    quiet,
    /** The scheduler's `act`: each choice waits until the system is quiet. */
    act: async (f: () => Promise<unknown>) => {
      await quiet();
      return f();
    },
    /** Gates every request of `client` as steps of `actor`. */
    gate<I extends object, O extends object>(client: GatedClient<I, O>, actor: Actor) {
      client.middlewareStack.add(
        (next, context) => async (args) => {
          await step(actor, context.commandName ?? "request");
          inFlight++;
          try {
            return await next(args);
          } finally {
            inFlight--;
          }
        },
        { step: "initialize", name: `gate ${actor.label}` },
      );
    },
    /** Runs `work` (not an SDK request: an engine's query, a compaction) as one step of `actor`. */
    async busy<T>(actor: Actor, what: string, work: () => Promise<T>): Promise<T> {
      await step(actor, what);
      actor.busy++;
      try {
        return await work();
      } finally {
        actor.busy--;
      }
    },
    /** One step of `actor` that does nothing: a wait (a lease's retry), a point where the clock may jump. */
    pause: (actor: Actor, what: string) => step(actor, what),
  };
}

export type RequestGate = ReturnType<typeof requestGate>;

/** The configuration of a stubbed service's client: a region, and credentials nothing checks. */
export const STUB_CLIENT_CONFIG = {
  region: "us-east-1",
  credentials: { accessKeyId: "x", secretAccessKey: "x" },
};

/**
 * A client of a service no emulator runs (Athena; the credentials secret's Secrets Manager),
 * gated for `actor` like every other, whose commands `answer` (by the command's name and input)
 * instead of a service: a stub, said so where it is used. What `answer` returns is the output.
 *
 * @example answeredClient(new AthenaClient(STUB_CLIENT_CONFIG), gate, actor, "answerAsAthena", async (command, input) => ({ QueryExecutionId: "q-1" }))
 */
export function answeredClient<C extends { middlewareStack: unknown }>(
  client: C,
  gate: RequestGate,
  actor: Actor,
  name: string,
  answer: (command: string, input: Record<string, unknown>) => Promise<Record<string, unknown>>,
): C {
  gate.gate(client as GatedClient<object, object>, actor);
  // Every client's stack takes the same middleware; TypeScript sees unrelated stacks.
  (client.middlewareStack as unknown as MiddlewareStack<{ input: object }, object>).add(
    (_next, context) => async (args) => {
      const output = await answer(context.commandName ?? "", args.input as Record<string, unknown>);
      return { output: { ...output, $metadata: {} }, response: {} };
    },
    { step: "initialize", name },
  );
  return client;
}
