//! P/Q generation and recovery for one row (md's "stripe") of a raid4/5/6 array.
//!
//! P = ⊕ D_i and Q = ⊕ g^slot(i) · D_i, with md's slot order from [`Stripe::q_slot`]
//! (kernel `drivers/md/raid5.c` `set_syndrome_sources`). Recovery restates kernel
//! `lib/raid6/recov.c` `raid6_2data_recov` and `raid6_datap_recov` and the raid5 XOR path of
//! `ops_run_compute5` (`drivers/md/raid5.c`).

use super::gf256;
use crate::error::{Error, Result};
use crate::layout::Stripe;

/// Members in a row: data, P and (raid6) Q.
pub fn row_members(stripe: &Stripe) -> usize {
    stripe.data_count as usize + 1 + usize::from(stripe.q.is_some())
}

/// Members a row can lose and still be recovered: 1 for raid4/5, 2 for raid6.
pub fn row_tolerance(stripe: &Stripe) -> usize {
    1 + usize::from(stripe.q.is_some())
}

/// The Q coefficient g^slot of logical data index `index` (raid6 only).
pub fn q_coefficient(stripe: &Stripe, index: usize) -> u8 {
    assert!(stripe.q.is_some(), "Q coefficients exist only in raid6 rows");
    assert!(index < stripe.data_count as usize, "data index {index} out of range");
    let slot = stripe.q_slot[index];
    // Slots are below 64 (disks), so the coefficients g^slot of one row are all distinct.
    assert!(slot < gf256::ORDER, "Q slot {slot} out of range");
    gf256::exp(slot)
}

/// Computes P, and Q when asked, of one row from its data blocks in logical data order.
/// `p` and `q` are overwritten. Panics if the block sizes or counts disagree with the stripe,
/// or if Q is asked of a row without one.
pub fn compute_pq(stripe: &Stripe, data: &[&[u8]], p: &mut [u8], q: Option<&mut [u8]>) {
    assert_eq!(data.len(), stripe.data_count as usize, "one block per data member");
    assert!(data.iter().all(|d| d.len() == p.len()), "every block of a row has one size");
    p.fill(0);
    for block in data {
        gf256::xor_into(p, block);
    }
    if let Some(q) = q {
        assert_eq!(q.len(), p.len(), "Q has the row's block size");
        let present: Vec<Option<&[u8]>> = data.iter().map(|&block| Some(block)).collect();
        syndrome_into(stripe, &present, q);
    }
}

/// Q of the data blocks in `data` (by logical index; `None` counts as a zero block):
/// ⊕ g^slot(i) · D_i. md evaluates the same polynomial by Horner's rule (`gen_syndrome`);
/// one multiply-accumulate per block is the same sum in half the passes over the bytes.
fn syndrome_into(stripe: &Stripe, data: &[Option<&[u8]>], q: &mut [u8]) {
    assert_eq!(data.len(), stripe.data_count as usize, "one entry per data member");
    q.fill(0);
    for (index, block) in data.iter().enumerate() {
        if let Some(block) = block {
            gf256::mul_acc(q, block, q_coefficient(stripe, index));
        }
    }
}

/// Recovers the blocks of the `missing` members of one row, in place.
///
/// `blocks[m]` is member `m`'s block of the row; the contents of missing members' blocks are
/// ignored and overwritten. More missing members than the row tolerates is data loss; a
/// member out of range or listed twice is an invalid request.
pub fn reconstruct_row(stripe: &Stripe, blocks: &mut [&mut [u8]], missing: &[u32]) -> Result<()> {
    let members = row_members(stripe);
    assert_eq!(blocks.len(), members, "one block per member of the row");
    let block_len = blocks[0].len();
    assert!(blocks.iter().all(|b| b.len() == block_len), "every block of a row has one size");
    validate_missing(missing, members)?;
    if missing.len() > row_tolerance(stripe) {
        return Err(Error::data_loss(format!(
            "a row of {members} members with {} parity blocks cannot lose {} members",
            row_tolerance(stripe),
            missing.len()
        )));
    }
    let lost_p = missing.contains(&stripe.p);
    let lost_q = stripe.q.is_some_and(|q| missing.contains(&q));
    let lost_data: Vec<usize> =
        (0..stripe.data_count as usize).filter(|&i| missing.contains(&stripe.data[i])).collect();
    match (lost_data.as_slice(), lost_p) {
        ([], _) => {}
        (&[x], false) => recover_from_p(stripe, blocks, x),
        (&[x], true) => recover_from_q(stripe, blocks, x),
        (&[x, y], _) => recover_two_data(stripe, blocks, x, y),
        _ => unreachable!("at most two members are missing"),
    }
    if lost_p || lost_q {
        regenerate_parity(stripe, blocks, lost_p, lost_q);
    }
    Ok(())
}

fn validate_missing(missing: &[u32], members: usize) -> Result<()> {
    for (at, &member) in missing.iter().enumerate() {
        if member as usize >= members {
            return Err(Error::request(format!(
                "missing member {member} is outside a row of {members} members"
            )));
        }
        if missing[..at].contains(&member) {
            return Err(Error::request(format!("member {member} is listed as missing twice")));
        }
    }
    Ok(())
}

/// `P ⊕ P'`, where P' is the XOR of the data blocks other than `skip`: the XOR of the
/// skipped blocks.
fn p_delta(stripe: &Stripe, blocks: &[&mut [u8]], skip: &[usize]) -> Vec<u8> {
    let mut delta = blocks[stripe.p as usize].to_vec();
    for index in (0..stripe.data_count as usize).filter(|i| !skip.contains(i)) {
        gf256::xor_into(&mut delta, blocks[stripe.data[index] as usize]);
    }
    delta
}

/// `Q ⊕ Q'`, where Q' is the syndrome of the data blocks other than `skip`: the syndrome
/// of the skipped blocks alone.
fn q_delta(stripe: &Stripe, blocks: &[&mut [u8]], skip: &[usize]) -> Vec<u8> {
    let q = stripe.q.expect("Q recovery needs a raid6 row");
    let survivors: Vec<Option<&[u8]>> = (0..stripe.data_count as usize)
        .map(|i| (!skip.contains(&i)).then(|| &*blocks[stripe.data[i] as usize]))
        .collect();
    let mut delta = vec![0u8; blocks[q as usize].len()];
    syndrome_into(stripe, &survivors, &mut delta);
    gf256::xor_into(&mut delta, blocks[q as usize]);
    delta
}

/// One data block from P, as raid5 does (and raid6 when P survives): D_x = P ⊕ other data.
fn recover_from_p(stripe: &Stripe, blocks: &mut [&mut [u8]], x: usize) {
    let recovered = p_delta(stripe, blocks, &[x]);
    blocks[stripe.data[x] as usize].copy_from_slice(&recovered);
}

/// One data block from Q when P is also lost (recov.c `raid6_datap_recov`):
/// D_x = g^-slot(x) · (Q ⊕ Q').
fn recover_from_q(stripe: &Stripe, blocks: &mut [&mut [u8]], x: usize) {
    let mut recovered = q_delta(stripe, blocks, &[x]);
    gf256::scale(&mut recovered, gf256::inv(q_coefficient(stripe, x)));
    blocks[stripe.data[x] as usize].copy_from_slice(&recovered);
}

/// Two data blocks from P and Q (recov.c `raid6_2data_recov`). With a = g^slot(x),
/// b = g^slot(y), Pd = D_x ⊕ D_y and Qd = a·D_x ⊕ b·D_y:
/// D_y = (a·Pd ⊕ Qd) / (a ⊕ b) and D_x = D_y ⊕ Pd.
fn recover_two_data(stripe: &Stripe, blocks: &mut [&mut [u8]], x: usize, y: usize) {
    let a = q_coefficient(stripe, x);
    let b = q_coefficient(stripe, y);
    // Distinct slots below 255 give distinct powers of g, so a ⊕ b is never zero.
    assert_ne!(a, b, "two data indices share a Q slot");
    let p_d = p_delta(stripe, blocks, &[x, y]);
    let mut d_y = q_delta(stripe, blocks, &[x, y]);
    gf256::mul_acc(&mut d_y, &p_d, a);
    gf256::scale(&mut d_y, gf256::inv(a ^ b));
    let mut d_x = p_d;
    gf256::xor_into(&mut d_x, &d_y);
    blocks[stripe.data[x] as usize].copy_from_slice(&d_x);
    blocks[stripe.data[y] as usize].copy_from_slice(&d_y);
}

/// Recomputes lost P and/or Q once every data block is present.
fn regenerate_parity(stripe: &Stripe, blocks: &mut [&mut [u8]], lost_p: bool, lost_q: bool) {
    let block_len = blocks[0].len();
    let mut p = vec![0u8; block_len];
    let mut q = vec![0u8; block_len];
    {
        let data: Vec<&[u8]> =
            stripe.data_members().iter().map(|&m| &*blocks[m as usize]).collect();
        compute_pq(stripe, &data, &mut p, lost_q.then_some(q.as_mut_slice()));
    }
    if lost_p {
        blocks[stripe.p as usize].copy_from_slice(&p);
    }
    if lost_q {
        let member = stripe.q.expect("Q was lost, so the row has one");
        blocks[member as usize].copy_from_slice(&q);
    }
}
