//! A reader for DiskSim's parameter syntax ("libparam"; DiskSim 4.0 manual, Bucy et al.,
//! CMU-PDL-08-101, §3 "Parameter files"): `TYPE NAME { Key = value, ... }` blocks, values that
//! are numbers, words, `[ lists ]`, nested `TYPE { ... }` blocks or `source FILE` includes,
//! `#` comments, and the top-level `source`, `instantiate [..] as NAME` and `topology ...`
//! statements. Written from the manual's description and the shipped files; no DiskSim code.
//!
//! Every value remembers its file and line so the importer can name them in messages.

use crate::error::{Error, ErrorKind, Result};

/// Where something was read.
#[derive(Clone, Debug, PartialEq)]
pub struct Pos {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Number(f64),
    Word(String),
    List(Vec<Value>),
    Block(Block),
    /// `source FILE` in value position (e.g. `Model = source atlas10k.model`).
    Source(String),
}

/// One `Key = value` pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub key: String,
    pub value: Value,
    pub pos: Pos,
}

/// `TYPE [NAME] { fields }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub kind: String,
    pub name: Option<String>,
    pub fields: Vec<Field>,
    pub pos: Pos,
}

/// A top-level statement of a file.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Block(Block),
    Source(String, Pos),
    /// `instantiate [ names ] as TYPE_NAME`
    Instantiate(Vec<String>, String, Pos),
    /// `topology ...` (kept only as its position; raidlab replays one disk).
    Topology(Pos),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Open,
    Close,
    LOpen,
    LClose,
    Comma,
    Eq,
    Word(String),
}

fn error(file: &str, line: u32, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidDevice, format!("{file}:{line}: {what}"))
}

fn tokenize(file: &str, text: &str) -> Result<Vec<(Tok, u32)>> {
    let mut out = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index as u32 + 1;
        let code = raw.split('#').next().unwrap_or("");
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut Vec<(Tok, u32)>| {
            if !word.is_empty() {
                out.push((Tok::Word(std::mem::take(word)), line));
            }
        };
        for c in code.chars() {
            let tok = match c {
                '{' => Some(Tok::Open),
                '}' => Some(Tok::Close),
                '[' => Some(Tok::LOpen),
                ']' => Some(Tok::LClose),
                ',' => Some(Tok::Comma),
                '=' => Some(Tok::Eq),
                c if c.is_whitespace() => None,
                c if c.is_control() => {
                    return Err(error(file, line, format!("unexpected control character {c:?}")))
                }
                c => {
                    word.push(c);
                    continue;
                }
            };
            flush(&mut word, &mut out);
            if let Some(tok) = tok {
                out.push((tok, line));
            }
        }
        flush(&mut word, &mut out);
    }
    Ok(out)
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<(Tok, u32)>,
    at: usize,
}

fn describe(tok: Option<&Tok>) -> String {
    match tok {
        None => "end of file".into(),
        Some(Tok::Open) => "'{'".into(),
        Some(Tok::Close) => "'}'".into(),
        Some(Tok::LOpen) => "'['".into(),
        Some(Tok::LClose) => "']'".into(),
        Some(Tok::Comma) => "','".into(),
        Some(Tok::Eq) => "'='".into(),
        Some(Tok::Word(w)) => format!("'{w}'"),
    }
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }
    fn peek2(&self) -> Option<&Tok> {
        self.toks.get(self.at + 1).map(|t| &t.0)
    }
    fn line(&self) -> u32 {
        self.toks
            .get(self.at)
            .or(self.toks.last())
            .map_or(1, |t| t.1)
    }
    fn pos(&self) -> Pos {
        Pos { file: self.file.to_string(), line: self.line() }
    }
    fn fail<T>(&self, what: impl std::fmt::Display) -> Result<T> {
        Err(error(self.file, self.line(), what))
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).map(|t| t.0.clone());
        self.at += 1;
        t
    }
    fn expect(&mut self, tok: Tok, context: &str) -> Result<()> {
        if self.peek() == Some(&tok) {
            self.at += 1;
            Ok(())
        } else {
            let found = describe(self.peek());
            self.fail(format!("expected {} {context}, found {found}", describe(Some(&tok))))
        }
    }
    fn word(&mut self, context: &str) -> Result<String> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.at += 1;
                Ok(w)
            }
            other => {
                let found = describe(other);
                self.fail(format!("expected a word {context}, found {found}"))
            }
        }
    }

    fn items(&mut self) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        while let Some(tok) = self.peek() {
            let pos = self.pos();
            let Tok::Word(head) = tok.clone() else {
                return self.fail(format!("expected a block, 'source', 'instantiate' or 'topology', found {}", describe(Some(tok))));
            };
            self.at += 1;
            match head.as_str() {
                "source" => items.push(Item::Source(self.word("after 'source'")?, pos)),
                "instantiate" => {
                    let names = self.list_words("after 'instantiate'")?;
                    let as_word = self.word("after the instantiate list")?;
                    if as_word != "as" {
                        return self.fail(format!("expected 'as', found '{as_word}'"));
                    }
                    items.push(Item::Instantiate(names, self.word("after 'as'")?, pos));
                }
                "topology" => {
                    // topology TYPE NAME [ TYPE NAME [ ... ] ... ]: skip to the balanced end.
                    self.word("after 'topology'")?;
                    self.word("after the topology type")?;
                    self.skip_balanced_list()?;
                    items.push(Item::Topology(pos));
                }
                _ => {
                    let name = match self.peek() {
                        Some(Tok::Word(_)) => Some(self.word("")?),
                        _ => None,
                    };
                    items.push(Item::Block(self.block_body(head, name, pos)?));
                }
            }
        }
        Ok(items)
    }

    fn list_words(&mut self, context: &str) -> Result<Vec<String>> {
        self.expect(Tok::LOpen, context)?;
        let mut names = Vec::new();
        loop {
            match self.next() {
                Some(Tok::LClose) => return Ok(names),
                Some(Tok::Comma) => {}
                Some(Tok::Word(w)) => names.push(w),
                other => {
                    self.at -= 1;
                    return self.fail(format!("unexpected {} in a name list", describe(other.as_ref())));
                }
            }
        }
    }

    fn skip_balanced_list(&mut self) -> Result<()> {
        self.expect(Tok::LOpen, "to open the topology")?;
        let mut depth = 1;
        while depth > 0 {
            match self.next() {
                Some(Tok::LOpen) => depth += 1,
                Some(Tok::LClose) => depth -= 1,
                Some(Tok::Word(_)) | Some(Tok::Comma) => {}
                None => return self.fail("unterminated topology: missing ']'"),
                other => {
                    self.at -= 1;
                    return self.fail(format!("unexpected {} in the topology", describe(other.as_ref())));
                }
            }
        }
        Ok(())
    }

    fn block_body(&mut self, kind: String, name: Option<String>, pos: Pos) -> Result<Block> {
        self.expect(Tok::Open, &format!("to open block '{kind}'"))?;
        let mut fields = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Close) => {
                    self.at += 1;
                    return Ok(Block { kind, name, fields, pos });
                }
                Some(Tok::Comma) => self.at += 1,
                None => return Err(error(self.file, self.line(), format!("block '{kind}' opened at line {} is not closed: missing '}}'", pos.line))),
                _ => fields.push(self.field()?),
            }
        }
    }

    fn field(&mut self) -> Result<Field> {
        let pos = self.pos();
        let mut key = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Word(w)) => {
                    key.push(w.clone());
                    self.at += 1;
                }
                Some(Tok::Eq) if !key.is_empty() => {
                    self.at += 1;
                    break;
                }
                other => {
                    let found = describe(other);
                    return if key.is_empty() {
                        self.fail(format!("expected a parameter name, found {found}"))
                    } else {
                        // Name the line the parameter starts on, not where the scan gave up.
                        Err(error(self.file, pos.line, format!("expected '=' after '{}', found {found}", key.join(" "))))
                    };
                }
            }
        }
        let key = key.join(" ");
        let value = self.value(&key)?;
        // A field ends at ',' or the closing brace.
        match self.peek() {
            Some(Tok::Comma) | Some(Tok::Close) => {}
            other => {
                let found = describe(other);
                return self.fail(format!("expected ',' or '}}' after the value of '{key}', found {found}"));
            }
        }
        Ok(Field { key, value, pos })
    }

    fn value(&mut self, key: &str) -> Result<Value> {
        let pos = self.pos();
        match self.next() {
            Some(Tok::LOpen) => {
                let mut items = Vec::new();
                loop {
                    match self.peek() {
                        Some(Tok::LClose) => {
                            self.at += 1;
                            return Ok(Value::List(items));
                        }
                        Some(Tok::Comma) => self.at += 1,
                        None => return self.fail(format!("list of '{key}' is not closed: missing ']'")),
                        _ => items.push(self.value(key)?),
                    }
                }
            }
            Some(Tok::Word(w)) if w == "source" => Ok(Value::Source(self.word("after 'source'")?)),
            Some(Tok::Word(w)) => {
                if self.peek() == Some(&Tok::Open) {
                    return Ok(Value::Block(self.block_body(w, None, pos)?));
                }
                if matches!(self.peek(), Some(Tok::Word(_))) && self.peek2() == Some(&Tok::Open) {
                    let name = self.word("")?;
                    return Ok(Value::Block(self.block_body(w, Some(name), pos)?));
                }
                Ok(match w.parse::<f64>() {
                    Ok(x) if x.is_finite() => Value::Number(x),
                    _ => Value::Word(w),
                })
            }
            other => {
                self.at -= 1;
                self.fail(format!("expected a value for '{key}', found {}", describe(other.as_ref())))
            }
        }
    }
}

/// Parses one file's text into its top-level statements.
pub fn parse_file(file: &str, text: &str) -> Result<Vec<Item>> {
    let toks = tokenize(file, text)?;
    Parser { file, toks, at: 0 }.items()
}
