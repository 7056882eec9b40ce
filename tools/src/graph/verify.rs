//! `verify: true`: each edge of a `callers` or `impact` answer confirmed or refuted by the
//! language server's references ([`cc_analysis::verification`]), asked through the run's
//! `lsp` tool — called through the registry like any other call, after the graph is
//! released, so the server's project rules apply.

use cc_analysis::verification::{self, Definition, Judged, References, Tally, Use};
use serde_json::json;

use crate::report::graph::{CallersReport, ImpactReport, Verification, Verified};
use crate::report::lsp::{LspReport, NavAnswer};
use crate::tool::CallContext;

/// The server's references of one definition, through the `lsp` tool.
async fn references(ctx: &CallContext, definition: Definition<'_>) -> References {
    let args = json!({
        "action": "references",
        "file": definition.path,
        "line": definition.line,
        "symbol": definition.name,
    });
    let output = match ctx.call_tool("lsp", args).await {
        Ok(output) => output,
        Err(error) => {
            return References::failed(format!("no language server answered: {}", error.message()))
        }
    };
    let report = match serde_json::from_value::<LspReport>(output.value) {
        Ok(LspReport::Unsupported(unsupported)) => return References::failed(unsupported.message),
        Ok(LspReport::Navigation(report)) => report,
        Ok(_) | Err(_) => return References::failed("the references answer could not be read"),
    };
    let NavAnswer::Locations {
        locations,
        truncated,
        outside_project,
        outside_project_total,
        by_name,
        not_compiled,
        ..
    } = report.answer
    else {
        return References::failed("the references answer holds no locations");
    };
    let outside = outside_project.into_iter().flatten().map(|place| {
        let why = place
            .why
            .unwrap_or_else(|| "outside its project".to_owned());
        ((place.path, place.line), why)
    });
    References::listed(
        locations.into_iter().map(|l| (l.path, l.line)),
        !truncated && report.incomplete.is_none(),
    )
    .with_outside(outside, outside_project_total)
    .with_by_name(
        by_name
            .into_iter()
            .flatten()
            .chain(not_compiled.into_iter().flatten()),
    )
}

fn mark(item: &mut Verified, judged: Judged) {
    item.verified = Some(judged.verdict);
    item.verify_note = judged.why;
}

fn verification(tally: Tally) -> Verification {
    Verification {
        confirmed: tally.confirmed,
        refuted: tally.refuted,
        unverifiable: tally.unverifiable,
        requests: tally.requests,
        by: "the language server's references (lsp references)".into(),
    }
}

/// Marks every caller of a `callers` answer.
pub(crate) async fn callers(ctx: &CallContext, report: &mut CallersReport) -> Verification {
    let target = &report.target.symbol;
    let target = Definition {
        path: &target.path,
        line: target.line.into(),
        name: &target.name,
    };
    let sites: Vec<Use<'_>> = report
        .callers
        .iter()
        .map(|site| Use {
            path: &site.path,
            first_line: site.line.into(),
            last_line: site.line.into(),
        })
        .collect();
    let (judged, tally) =
        verification::callers(target, &sites, |definition| references(ctx, definition)).await;
    for (site, judged) in report.callers.iter_mut().zip(judged) {
        mark(&mut site.verified, judged);
    }
    verification(tally)
}

/// Marks every dependent of an `impact` answer, level by level.
pub(crate) async fn impact(ctx: &CallContext, report: &mut ImpactReport) -> Verification {
    let target = Definition {
        path: &report.target.path,
        line: report.target.line.into(),
        name: &report.target.name,
    };
    let levels: Vec<Vec<(Definition<'_>, Use<'_>)>> = report
        .levels
        .iter()
        .map(|level| {
            level
                .dependents
                .iter()
                .map(|item| {
                    let symbol = &item.symbol;
                    let definition = Definition {
                        path: &symbol.path,
                        line: symbol.line.into(),
                        name: &symbol.name,
                    };
                    let span = Use {
                        path: &symbol.path,
                        first_line: item.start_line.into(),
                        last_line: item.end_line.into(),
                    };
                    (definition, span)
                })
                .collect()
        })
        .collect();
    let (judged, tally) =
        verification::impact(target, &levels, |definition| references(ctx, definition)).await;
    for (level, judged) in report.levels.iter_mut().zip(judged) {
        for (item, judged) in level.dependents.iter_mut().zip(judged) {
            mark(&mut item.verified, judged);
        }
    }
    verification(tally)
}
