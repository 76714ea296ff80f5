/**
 * The stylesheet of the HTML report, inlined into its <style> element (docs/design.md §8: one
 * self-contained file, no network). Light and dark colour schemes; the chart's phase colours
 * are the variables --drain, --stage, --reboot, --soft, --ready and --staging.
 */
export const REPORT_CSS = `
:root{--bg:#fff;--fg:#1f2328;--dim:#656d76;--line:#d0d7de;--panel:#f6f8fa;--lane:#f6f8fa;--lane2:#eef1f4;
--add-bg:#dafbe1;--add:#116329;--del-bg:#ffebe9;--del:#a40e26;--ok:#1a7f37;--warn:#9a6700;--warn-bg:#fff8c5;--bad:#cf222e;--bad-bg:#ffebe9;
--drain:#d4a72c;--stage:#8250df;--reboot:#cf4a2e;--soft:#2da44e;--ready:#57a6ff;--staging:#c8b5f5;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--dim:#8d96a0;--line:#30363d;--panel:#161b22;--lane:#161b22;--lane2:#1c2128;
--add-bg:#12261e;--add:#7ee787;--del-bg:#25171c;--del:#ffa198;--warn-bg:#2e2610;--bad-bg:#2d1517;--staging:#5b4a8a;--accent:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:32px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}h3{font-size:15px;margin:18px 0 4px}
.mono,pre,code{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
.dim{color:var(--dim)}.meta{color:var(--dim);margin:0 0 10px}
.planline{font-weight:600;padding:10px 14px;border-radius:6px;border:1px solid var(--line);background:var(--panel);margin:8px 0}
.planline.ok{border-left:4px solid var(--ok)}.planline.warn{border-left:4px solid var(--warn)}.planline.bad{border-left:4px solid var(--bad);background:var(--bad-bg)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:var(--panel)}
.card .label{color:var(--dim);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:21px;font-weight:650;line-height:1.3;white-space:nowrap}.card .value small{font-size:12px;font-weight:500;color:var(--dim)}
.card .sub{color:var(--dim);font-size:12px}
.card.warn{border-color:var(--warn);background:var(--warn-bg)}.card.bad{border-color:var(--bad);background:var(--bad-bg)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:12px 0;width:100%}th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--panel);font-weight:600;font-size:13px}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.warn{color:var(--warn);font-weight:600}
.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:10px;border:1px solid var(--line);color:var(--dim)}
.tag.warn{border-color:var(--warn);color:var(--warn)}.tag.bad,.bad{border-color:var(--bad);color:var(--bad)}
ul.diags{list-style:none;padding:0;margin:0}ul.diags li{border:1px solid var(--line);border-left-width:4px;border-radius:6px;padding:8px 12px;margin:6px 0}
ul.diags li.error{border-left-color:var(--bad)}ul.diags li.warning{border-left-color:var(--warn)}
.sev{font-weight:700;text-transform:uppercase;font-size:11px;letter-spacing:.05em}li.error .sev{color:var(--bad)}li.warning .sev{color:var(--warn)}
.hint{color:var(--accent)}
.count{font-weight:500;color:var(--dim);font-size:14px}
details.change{border:1px solid var(--line);border-radius:6px;margin:8px 0;background:var(--bg)}
details.change>summary{cursor:pointer;padding:8px 12px;background:var(--panel);border-radius:6px}
details.change[open]>summary{border-bottom:1px solid var(--line);border-radius:6px 6px 0 0}
details.change>p{margin:8px 12px}
.sym{display:inline-block;width:1.2em;text-align:center;font-weight:700}.sym.create{color:var(--ok)}.sym.update{color:var(--warn)}.sym.delete{color:var(--bad)}
.stat{float:right}.stat .add{color:var(--add)}.stat .del{color:var(--del)}
pre.diff{margin:0;padding:8px 0;overflow-x:auto}pre.diff span{display:inline-block;min-width:100%;padding:0 12px;white-space:pre}
pre.diff .add{background:var(--add-bg);color:var(--add)}pre.diff .del{background:var(--del-bg);color:var(--del)}pre.diff .note{color:var(--dim);font-style:italic}
pre.waves{white-space:pre-wrap;word-break:break-all;max-height:420px;overflow:auto;background:var(--panel);padding:8px;border-radius:6px}
ul.groups{padding-left:20px}ul.groups li.warning{color:var(--warn)}
.legend{display:flex;flex-wrap:wrap;gap:14px;margin:6px 0 8px;font-size:12px;color:var(--dim)}
.key{display:inline-flex;align-items:center;gap:5px}.sw{display:inline-block;width:14px;height:10px;border-radius:2px}
.sw.drain{background:var(--drain)}.sw.stage{background:var(--stage)}.sw.reboot{background:var(--reboot)}.sw.soft-reboot{background:var(--soft)}.sw.ready{background:var(--ready)}.sw.staging{background:var(--staging)}
.chart-wrap{overflow-x:auto;border:1px solid var(--line);border-radius:8px;background:var(--bg)}
svg.chart{display:block;width:100%;min-width:760px;height:auto;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
svg .lane{fill:var(--lane)}svg g.row:nth-child(even){}
svg .lane-span{fill:var(--lane2);stroke:var(--line)}
svg .pool-label{font-size:13px;font-weight:700;fill:var(--fg)}svg .lane-sum{font-size:11px;fill:var(--dim)}
svg .row-label{font-size:11px;fill:var(--fg);font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
svg .row-count{font-size:10px;fill:var(--dim)}svg .bar-label{font-size:10px;fill:#fff;font-weight:700;pointer-events:none;paint-order:stroke;stroke:rgba(0,0,0,.35);stroke-width:2px}
svg .softband{stroke:var(--bg);stroke-width:.6}
svg .tick{font-size:10px;fill:var(--dim)}svg .grid{stroke:var(--line);stroke-dasharray:2 3}svg .end{stroke:var(--fg);stroke-width:1.5}
svg .bar.drain{fill:var(--drain)}svg .bar.stage{fill:var(--stage)}svg .bar.reboot{fill:var(--reboot)}svg .bar.soft-reboot{fill:var(--soft)}svg .bar.ready{fill:var(--ready)}
svg .bar.staging{fill:var(--staging)}svg .bar.merged{opacity:.85}
svg .bar.window-wait{fill:var(--lane2);stroke:var(--dim);stroke-dasharray:4 3}svg .wait-label{font-size:11px;fill:var(--fg)}.sw.window-wait{background:var(--lane2);border:1px dashed var(--dim)}
svg .bar-outline{fill:none;stroke:rgba(0,0,0,.25)}svg .bar-outline.failed,svg .bar.failed{stroke:var(--bad);stroke-width:2}
svg .estimate{stroke:var(--accent);stroke-width:1.5;stroke-dasharray:5 4}
.sw.end{background:var(--fg);width:3px}.sw.estimate{background:var(--accent);width:3px}.sw.failed{border:2px solid var(--bad);background:transparent}
.fail{color:var(--bad)}svg .failed-label{font-size:10px;font-weight:700;fill:var(--bad)}
footer{margin-top:40px;color:var(--dim);font-size:12px;border-top:1px solid var(--line);padding-top:10px}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
`;
