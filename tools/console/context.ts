import { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import { type FlowSnapshot, FlowWindow } from "../local/flow";
import { ledgerFollower } from "../local/state";
import { cloudWatchFlow, cloudWatchQuarantineSpikes } from "../query/cloudwatch";
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
  // The spikes are asked for at most once a minute (CloudWatch's resolution; each ask reads two metrics per trigger).
  let spikes: { at: number; value: Promise<FlowSnapshot["spikes"]> } | undefined;
  return {
    target,
    flow: async () => {
      const now = Date.now();
      if (!spikes || now - spikes.at >= 60_000)
        spikes = { at: now, value: cloudWatchQuarantineSpikes(cloudWatch, now).catch(() => []) };
      const [flow, current] = await Promise.all([cloudWatchFlow(cloudWatch, now), spikes.value]);
      return { ...flow, spikes: current };
    },
  };
}
