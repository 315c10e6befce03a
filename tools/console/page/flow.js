// The live flow view: the last 15 minutes' outcomes as cards and a chart, the quarantine spikes
// above them, the queues' depths and the counters.

import { updateApps } from "./apps.js";
import { iso } from "./format.js";
import { api, state } from "./state.js";
import { $, chart, fillCards, fillTable } from "./widgets.js";

const OUTCOMES = ["projected", "stale", "archived-only", "quarantined", "failed"];
const COLORS = {
  accepted: "#2f6fde",
  rejected: "#8a5cd1",
  projected: "#2e9d5b",
  stale: "#9aa3b1",
  "archived-only": "#d99a21",
  quarantined: "#c7362f",
  failed: "#7a1f1a",
};

/**
 * The triggers whose quarantine rate is a spike over the window (more than 5% of at least 20
 * events: the alarm's rule), highlighted above the flow: a platform payload change shows here.
 */
function showSpikes(spikes) {
  const box = $("quarantine-spikes");
  box.hidden = spikes.length === 0;
  box.replaceChildren(
    ...spikes.map((s) => {
      const line = document.createElement("div");
      line.className = "spike";
      line.dataset.trigger = s.trigger;
      line.textContent = `${s.trigger}: ${s.quarantined} of ${s.events} events quarantined (${s.share}%) in the last 15 minutes: has the platform changed this payload? See the recent events' stories.`;
      return line;
    }),
  );
}

export async function refreshFlow() {
  const [overview, flow] = await Promise.all([
    api("overview", { app: state.app }),
    api("flow", { app: state.app }),
  ]);
  updateApps(overview);
  // A batch lands in one second: per-second bars would be spikes. The chart shows events per
  // second averaged over 5 s (locally) or a minute (CloudWatch's resolution).
  const group = flow.resolutionSeconds === 1 ? 5 : 1;
  const seconds = group * flow.resolutionSeconds;
  $("flow-resolution").textContent =
    flow.resolutionSeconds === 1
      ? "events per second (5 s averages), last 15 minutes"
      : `events per second (${flow.resolutionSeconds} s averages, CloudWatch), last 15 minutes, all apps`;
  fillCards($("flow-cards"), [
    { id: "accepted", label: "accepted (15 min)", value: flow.totals.accepted },
    ...OUTCOMES.map((o) => ({
      id: o,
      label: o,
      value: flow.totals[o],
      bad: o === "quarantined" || o === "failed",
    })),
    { id: "rejected", label: "rejected by the edge", value: flow.totals.rejected, bad: true },
  ]);
  showSpikes(flow.spikes ?? []);
  const rate = (values) =>
    Array.from({ length: Math.ceil(values.length / group) }, (_, i) => {
      const sum = values.slice(i * group, (i + 1) * group).reduce((a, b) => a + b, 0);
      return Math.round((sum / seconds) * 100) / 100;
    });
  const labels = rate(flow.series.accepted).map((_, i) => iso(flow.from + i * seconds * 1000).slice(11, 19));
  chart("flow-chart", {
    type: "bar",
    data: {
      labels,
      datasets: [
        ...OUTCOMES.map((o) => ({
          label: o,
          data: rate(flow.series[o]),
          backgroundColor: COLORS[o],
          stack: "out",
        })),
        {
          type: "line",
          label: "accepted",
          data: rate(flow.series.accepted),
          borderColor: COLORS.accepted,
          pointRadius: 0,
          borderWidth: 1.5,
        },
      ],
    },
    options: {
      scales: { x: { stacked: true, ticks: { maxTicksLimit: 15 } }, y: { stacked: true, beginAtZero: true } },
    },
  });
  const q = overview.queues;
  fillTable(
    $("queues"),
    [
      ["queue", "queue"],
      ["depth", "messages"],
      ["deadLetters", "dead-lettered"],
    ],
    q ? ["events", "recordings"].map((name) => ({ queue: name, ...q[name] })) : [],
    { key: (r) => r.queue, empty: "no queues on this target" },
  );
  const rows = [
    ...Object.entries(overview.stats.items).map(([what, count]) => ({
      what: `items: ${what}`,
      key: `items.${what}`,
      count,
    })),
    ...Object.entries(overview.stats.outcomes).flatMap(([service, counts]) =>
      Object.entries(counts).map(([outcome, count]) => ({
        what: `${service}: ${outcome}`,
        key: `${service}.${outcome}`,
        count,
      })),
    ),
  ];
  fillTable(
    $("stats"),
    [
      ["what", "what"],
      ["count", "count"],
    ],
    rows,
    { key: (r) => r.key },
  );
}
