import { drawApp } from "./watchdog-traces";
const eps: Array<[string, number, number]> = [];
for (const s of ["steady", "diurnal-utc", "diurnal-berlin", "diurnal-new-york", "diurnal-kolkata"] as const)
  for (let i = 0; i < 35; i++) for (const f of drawApp(s, i).faults) if (f.kind === "refused") eps.push([`${s}-${i}`, f.start, f.end]);
eps.sort((a, b) => a[1] - b[1]);
for (const [id, s, e] of eps) {
  const over = eps.filter(([o, os, oe]) => o !== id && os < s && oe + 300000 > s).map(([o]) => o);
  console.log(id, new Date(s).toISOString(), over.length ? `starts during ${over.join(",")}` : "");
}
