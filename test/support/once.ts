/**
 * A set-up that several tests of a file need and that costs too much to repeat (a simulated
 * history, a rollup): made by the first test that asks, whichever it is, and shared by the rest.
 * Each test thus sets up what it needs and passes in any order (issue #56).
 *
 * @example const simulated = once(() => runSimulation(…)); it("…", async () => { const report = await simulated(); … })
 */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
}
