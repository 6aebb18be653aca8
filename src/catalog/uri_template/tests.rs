//! Table-driven tests of RFC 6570 expansion and of which variables are optional.

use serde_json::json;

use super::*;

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("args must be an object, got {other}"),
    }
}

/// The variables of RFC 6570 §3.2, plus a few of ours.
fn rfc_vars() -> Map<String, Value> {
    args(json!({
        "count": ["one", "two", "three"], "dom": ["example", "com"], "dub": "me/too",
        "hello": "Hello World!", "half": "50%", "var": "value", "who": "fred",
        "base": "http://example.com/home/", "path": "/foo/bar",
        "list": ["red", "green", "blue"],
        "keys": {"semi": ";", "dot": ".", "comma": ","},
        "v": "6", "x": "1024", "y": "768", "empty": "", "empty_keys": {}, "undef": null,
        "n": 5, "b": true, "uni": "é", "pct": "a%20b%zz", "holes": [null, "a", null],
    }))
}

/// Every example of RFC 6570 §3.2.2–3.2.9 whose variables are defined or optional.
#[test]
fn expands_the_rfc_examples_of_every_operator() {
    let cases = [
        // 3.2.2 simple
        ("{var}", "value"),
        ("{hello}", "Hello%20World%21"),
        ("{half}", "50%25"),
        ("O{empty}X", "OX"),
        ("{x,y}", "1024,768"),
        ("{x,hello,y}", "1024,Hello%20World%21,768"),
        ("?{x,empty}", "?1024,"),
        ("{var:3}", "val"),
        ("{var:30}", "value"),
        ("{list}", "red,green,blue"),
        ("{list*}", "red,green,blue"),
        ("{keys}", "semi,%3B,dot,.,comma,%2C"),
        ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
        // 3.2.3 reserved
        ("{+var}", "value"),
        ("{+hello}", "Hello%20World!"),
        ("{+half}", "50%25"),
        ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
        ("{+base}index", "http://example.com/home/index"),
        ("O{+empty}X", "OX"),
        ("O{+undef}X", "OX"),
        ("{+path}/here", "/foo/bar/here"),
        ("here?ref={+path}", "here?ref=/foo/bar"),
        ("up{+path}{var}/here", "up/foo/barvalue/here"),
        ("{+x,hello,y}", "1024,Hello%20World!,768"),
        ("{+path,x}/here", "/foo/bar,1024/here"),
        ("{+path:6}/here", "/foo/b/here"),
        ("{+list}", "red,green,blue"),
        ("{+list*}", "red,green,blue"),
        ("{+keys}", "semi,;,dot,.,comma,,"),
        ("{+keys*}", "semi=;,dot=.,comma=,"),
        // 3.2.4 fragment
        ("{#var}", "#value"),
        ("{#hello}", "#Hello%20World!"),
        ("{#half}", "#50%25"),
        ("foo{#empty}", "foo#"),
        ("foo{#undef}", "foo"),
        ("{#x,hello,y}", "#1024,Hello%20World!,768"),
        ("{#path,x}/here", "#/foo/bar,1024/here"),
        ("{#path:6}/here", "#/foo/b/here"),
        ("{#list}", "#red,green,blue"),
        ("{#list*}", "#red,green,blue"),
        ("{#keys}", "#semi,;,dot,.,comma,,"),
        ("{#keys*}", "#semi=;,dot=.,comma=,"),
        // 3.2.5 label
        ("{.who}", ".fred"),
        ("{.who,who}", ".fred.fred"),
        ("{.half,who}", ".50%25.fred"),
        ("www{.dom*}", "www.example.com"),
        ("X{.var}", "X.value"),
        ("X{.empty}", "X."),
        ("X{.undef}", "X"),
        ("X{.var:3}", "X.val"),
        ("X{.list}", "X.red,green,blue"),
        ("X{.list*}", "X.red.green.blue"),
        ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
        ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
        ("X{.empty_keys}", "X"),
        ("X{.empty_keys*}", "X"),
        // 3.2.6 path segments
        ("{/who}", "/fred"),
        ("{/who,who}", "/fred/fred"),
        ("{/half,who}", "/50%25/fred"),
        ("{/who,dub}", "/fred/me%2Ftoo"),
        ("{/var}", "/value"),
        ("{/var,empty}", "/value/"),
        ("{/var,undef}", "/value"),
        ("{/var,x}/here", "/value/1024/here"),
        ("{/var:1,var}", "/v/value"),
        ("{/list}", "/red,green,blue"),
        ("{/list*}", "/red/green/blue"),
        ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
        ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
        ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
        // 3.2.7 path-style parameters
        ("{;who}", ";who=fred"),
        ("{;half}", ";half=50%25"),
        ("{;empty}", ";empty"),
        ("{;v,empty,who}", ";v=6;empty;who=fred"),
        ("{;v,bar,who}", ";v=6;who=fred"),
        ("{;x,y}", ";x=1024;y=768"),
        ("{;x,y,empty}", ";x=1024;y=768;empty"),
        ("{;x,y,undef}", ";x=1024;y=768"),
        ("{;hello:5}", ";hello=Hello"),
        ("{;list}", ";list=red,green,blue"),
        ("{;list*}", ";list=red;list=green;list=blue"),
        ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
        ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
        // 3.2.8 query
        ("{?who}", "?who=fred"),
        ("{?half}", "?half=50%25"),
        ("{?x,y}", "?x=1024&y=768"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="),
        ("{?x,y,undef}", "?x=1024&y=768"),
        ("{?var:3}", "?var=val"),
        ("{?list}", "?list=red,green,blue"),
        ("{?list*}", "?list=red&list=green&list=blue"),
        ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
        ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
        // 3.2.9 query continuation
        ("{&who}", "&who=fred"),
        ("{&half}", "&half=50%25"),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("{&x,y,empty}", "&x=1024&y=768&empty="),
        ("{&var:3}", "&var=val"),
        ("{&list}", "&list=red,green,blue"),
        ("{&list*}", "&list=red&list=green&list=blue"),
        ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
        ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
        // Ours: JSON scalars, UTF-8, `%` handling, nulls inside lists, plain text.
        ("n={n}&b={b}", "n=5&b=true"),
        ("{uni}", "%C3%A9"),
        // `%zz` is not a triplet, so its `%` is encoded even in reserved expansion.
        ("{+pct}", "a%20b%25zz"),
        ("{/holes*}", "/a"),
        ("no expressions", "no expressions"),
        ("a}b", "a}b"),
    ];
    let vars = rfc_vars();
    for (template, want) in cases {
        assert_eq!(expand(template, &vars).as_deref(), Ok(want), "{template}");
    }
}

/// A variable as `variable_specs` reports it: (name, optional, explode).
type Spec = (&'static str, bool, bool);

/// Only a simple `{x}` / `{x:n}` is required; every operator that can expand to nothing
/// makes its variables optional, and so does explode.
#[test]
fn a_variable_is_optional_unless_it_is_used_as_a_simple_expression() {
    let cases: [(&str, &[Spec]); 15] = [
        ("file:///{path}", &[("path", false, false)]),
        ("{x:3}", &[("x", false, false)]),
        ("file:///{+path}", &[("path", true, false)]),
        ("page{#section}", &[("section", true, false)]),
        ("file{.ext}", &[("ext", true, false)]),
        ("repo{/segment}", &[("segment", true, false)]),
        ("repo{/segments*}", &[("segments", true, true)]),
        (
            "map{;lat,long}",
            &[("lat", true, false), ("long", true, false)],
        ),
        ("find{?q}", &[("q", true, false)]),
        ("find?a=1{&r}", &[("r", true, false)]),
        ("{list*}", &[("list", true, true)]),
        (
            "{a}{?a,q}{&r}",
            &[("a", false, false), ("q", true, false), ("r", true, false)],
        ),
        ("{/a}{a}", &[("a", false, false)]),
        ("{/a*}{?a}", &[("a", true, true)]),
        ("plain", &[]),
    ];
    for (template, want) in cases {
        let specs = variable_specs(template);
        let got: Vec<(&str, bool, bool)> = specs
            .iter()
            .map(|v| (v.name.as_str(), v.optional, v.explode))
            .collect();
        assert_eq!(got, want, "{template}");
    }
}

#[test]
fn a_missing_optional_variable_is_left_out_with_its_prefix() {
    let none = Map::new();
    let segments = args(json!({"segments": ["a b", "c"]}));
    let cases = [
        ("repo{/segments*}", &none, "repo"),
        ("repo{/segments*}", &segments, "repo/a%20b/c"),
        ("repo{/segments*}/raw", &segments, "repo/a%20b/c/raw"),
        ("file:///{+path}", &none, "file:///"),
        ("file{.ext}", &none, "file"),
        ("page{#section}", &none, "page"),
        ("map{;lat,long}", &none, "map"),
        ("find{?q}{&r}", &none, "find"),
        ("{list*}", &none, ""),
    ];
    for (template, vars, want) in cases {
        assert_eq!(expand(template, vars).as_deref(), Ok(want), "{template}");
    }
}

#[test]
fn a_missing_required_variable_is_an_error_naming_it() {
    let vars = args(json!({"a": "1", "nothing": null, "none": []}));
    for (template, name) in [
        ("x/{b}", "b"),
        ("{+a}{c}", "c"),
        ("{nothing}", "nothing"),
        ("{none}", "none"),
        ("{x:3}", "x"),
        ("?{a,undef}", "undef"),
    ] {
        let err = expand(template, &vars).expect_err(template);
        assert_eq!(
            err,
            UriTemplateError::MissingVariable {
                name: name.to_owned()
            },
            "{template}"
        );
        assert_eq!(
            err.to_string(),
            format!("missing value for uri template variable {name}")
        );
    }
}

#[test]
fn malformed_templates_and_values_are_errors() {
    let vars = args(json!({"nested": [[1]], "deep": {"k": {"x": 1}}, "list": ["a"]}));
    assert!(matches!(
        expand("x{a", &vars),
        Err(UriTemplateError::UnclosedExpression { position: 1, .. })
    ));
    for bad in [
        "{}",
        "{=a}",
        "{a b}",
        "{a:0}",
        "{a:x}",
        "{a:+1}",
        "{a:01}",
        "{a:10000}",
        "{a,}",
    ] {
        assert!(
            matches!(
                expand(bad, &vars),
                Err(UriTemplateError::InvalidExpression { .. })
            ),
            "{bad}"
        );
    }
    for (template, name) in [
        ("{nested}", "nested"),
        ("{?deep*}", "deep"),
        ("{/list:2}", "list"),
    ] {
        assert_eq!(
            expand(template, &vars),
            Err(UriTemplateError::UnsupportedValue {
                name: name.to_owned()
            }),
            "{template}"
        );
    }
}

#[test]
fn variables_are_listed_in_order_without_repeats() {
    let cases: [(&str, &[&str]); 6] = [
        ("file:///{path}", &["path"]),
        (
            "db://{schema}/{table}{?limit,offset}",
            &["schema", "table", "limit", "offset"],
        ),
        ("{a}{+a}{#b}{/a,c}", &["a", "b", "c"]),
        ("{var:3}{list*}", &["var", "list"]),
        ("plain", &[]),
        ("{ok}{bad name}{", &["ok"]),
    ];
    for (template, want) in cases {
        assert_eq!(variables(template), want, "{template}");
    }
}
