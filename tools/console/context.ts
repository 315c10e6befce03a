import { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import { FlowWindow } from "../local/flow";
import { ledgerFollower } from "../local/state";
import { cloudWatchFlow } from "../query/cloudwatch";
import type { Target } from "../target";
import type { ConsoleContext } from "./api";

/**
 * The local stack's console context: the live flow from its ledger (each counted outcome with its
 * time, read as it grows), the counters from its state directory.
 */
export function localConsoleContext(target: Target, stateDir: string): ConsoleContext {
  const window = new FlowWindow();
  const follow = ledgerFollower(stateDir);
  return {
    target,
    stateDir,
    flow: async (app) => {
      window.add(follow());
      return window.snapshot(Date.now(), app);
    },
  };
}

/** A deployed stack's console context: the live flow from CloudWatch (a minute a bucket, all apps). */
export function deployedConsoleContext(
  target: Target,
  cloudWatch = new CloudWatchClient({}),
): ConsoleContext {
  return { target, flow: () => cloudWatchFlow(cloudWatch) };
}
