//! Statistics and the printed table.

use std::fmt::Write as _;

/// Median and p99 of samples in µs.
#[derive(Clone, Copy, Debug)]
pub struct Lat {
    pub median: f64,
    pub p99: f64,
}

pub fn lat(samples: &mut [f64]) -> Lat {
    samples.sort_by(f64::total_cmp);
    let q = |f: f64| samples[((samples.len() as f64 * f) as usize).min(samples.len() - 1)];
    Lat {
        median: q(0.5),
        p99: q(0.99),
    }
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One table row: what was measured, the baseline, ours, and how they compare to the target.
pub struct Row {
    pub item: &'static str,
    pub what: String,
    pub base: String,
    pub ours: String,
    pub ratio: String,
    pub diff: String,
    pub target: String,
    pub met: Option<bool>,
}

impl Row {
    pub fn new(item: &'static str, what: impl Into<String>) -> Row {
        Row {
            item,
            what: what.into(),
            base: String::new(),
            ours: String::new(),
            ratio: String::new(),
            diff: String::new(),
            target: String::new(),
            met: None,
        }
    }
    pub fn base(mut self, s: impl Into<String>) -> Row {
        self.base = s.into();
        self
    }
    pub fn ours(mut self, s: impl Into<String>) -> Row {
        self.ours = s.into();
        self
    }
    pub fn ratio(mut self, r: f64) -> Row {
        self.ratio = format!("{r:.2}×");
        self
    }
    pub fn diff(mut self, s: impl Into<String>) -> Row {
        self.diff = s.into();
        self
    }
    pub fn target(mut self, s: impl Into<String>, met: bool) -> Row {
        self.target = s.into();
        self.met = Some(met);
        self
    }
}

pub fn us(v: f64) -> String {
    format!("{v:.0} µs")
}

pub fn lat_str(l: Lat) -> String {
    format!("{:.0} / {:.0} µs", l.median, l.p99)
}

pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// The Markdown table.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| # | measurement | baseline | companion | ratio | added | target | met |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.item, r.what, r.base, r.ours, r.ratio, r.diff, r.target, met
        );
    }
    s
}
