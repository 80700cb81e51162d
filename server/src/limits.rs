//! What one source address, and the server in all, may hold: open
//! connections, seats and rooms. Each is a permit that gives its share back
//! when dropped, so no path can forget to.
//!
//! Connections are counted from the moment they are accepted (before any
//! HTTP or WebSocket work), so an address that opens sockets and never
//! finishes the upgrade runs into its cap; the upgrade deadline then closes
//! them. Seats and opened rooms are counted per address so that one address
//! cannot say `hello` into every seat, or name a new room after another
//! until the server holds no more.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use skirmish_core::{ErrorCode, ProtocolError};

use crate::config::Limits;
use crate::metrics::Refusal;

/// The counts of every address with anything open.
#[derive(Debug)]
pub struct AddressBook {
    limits: Limits,
    inner: Mutex<Book>,
}

#[derive(Debug, Default)]
struct Book {
    connections: usize,
    by_address: HashMap<IpAddr, Usage>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Usage {
    connections: usize,
    seats: usize,
    rooms: usize,
}

/// What a permit holds a share of.
#[derive(Debug, Clone, Copy)]
enum Share {
    Connection,
    Seat,
    Room,
}

/// A share of an address's allowance; given back on drop.
#[derive(Debug)]
pub struct Permit {
    book: Arc<AddressBook>,
    address: IpAddr,
    share: Share,
}

impl Permit {
    /// The source address this permit counts against.
    pub fn address(&self) -> IpAddr {
        self.address
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut book = self.book.lock();
        if let Share::Connection = self.share {
            book.connections = book.connections.saturating_sub(1);
        }
        let Some(usage) = book.by_address.get_mut(&self.address) else {
            return;
        };
        let count = match self.share {
            Share::Connection => &mut usage.connections,
            Share::Seat => &mut usage.seats,
            Share::Room => &mut usage.rooms,
        };
        *count = count.saturating_sub(1);
        if *usage == Usage::default() {
            book.by_address.remove(&self.address);
        }
    }
}

impl AddressBook {
    /// An empty book enforcing `limits`.
    pub fn new(limits: Limits) -> Arc<AddressBook> {
        Arc::new(AddressBook {
            limits,
            inner: Mutex::new(Book::default()),
        })
    }

    /// The limits enforced.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn lock(&self) -> MutexGuard<'_, Book> {
        // Counts only; a panicking holder leaves nothing half-done that matters.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a new connection from `address`.
    ///
    /// # Errors
    /// The server, or the address, already holds its maximum of connections.
    pub fn connect(self: &Arc<Self>, address: IpAddr) -> Result<Permit, Refusal> {
        let address = holder(address);
        let mut book = self.lock();
        if book.connections >= self.limits.max_connections {
            return Err(Refusal::TooManyConnections);
        }
        let usage = book.by_address.entry(address).or_default();
        if usage.connections >= self.limits.max_connections_per_address {
            if *usage == Usage::default() {
                book.by_address.remove(&address);
            }
            return Err(Refusal::TooManyFromAddress);
        }
        usage.connections += 1;
        book.connections += 1;
        Ok(self.permit(address, Share::Connection))
    }

    /// A seat for `address`.
    ///
    /// # Errors
    /// `address_limit` if the address already holds its maximum of seats.
    pub fn seat(self: &Arc<Self>, address: IpAddr) -> Result<Permit, ProtocolError> {
        let max = self.limits.max_seats_per_address;
        self.take(address, Share::Seat, max, || {
            format!("this address already holds {max} seats")
        })
    }

    /// Leave for `address` to open a new room.
    ///
    /// # Errors
    /// `address_limit` if rooms it opened are still open up to its maximum.
    pub fn room(self: &Arc<Self>, address: IpAddr) -> Result<Permit, ProtocolError> {
        let max = self.limits.max_rooms_per_address;
        self.take(address, Share::Room, max, || {
            format!("this address has already opened {max} rooms that are still open")
        })
    }

    fn take(
        self: &Arc<Self>,
        address: IpAddr,
        share: Share,
        max: usize,
        why: impl FnOnce() -> String,
    ) -> Result<Permit, ProtocolError> {
        let address = holder(address);
        let mut book = self.lock();
        let usage = book.by_address.entry(address).or_default();
        let count = match share {
            Share::Connection => &mut usage.connections,
            Share::Seat => &mut usage.seats,
            Share::Room => &mut usage.rooms,
        };
        if *count >= max {
            return Err(ProtocolError::new(ErrorCode::AddressLimit, why()));
        }
        *count += 1;
        Ok(self.permit(address, share))
    }

    fn permit(self: &Arc<Self>, address: IpAddr, share: Share) -> Permit {
        Permit {
            book: self.clone(),
            address,
            share,
        }
    }

    /// Open connections in all.
    pub fn connections(&self) -> usize {
        self.lock().connections
    }

    /// Addresses with anything open.
    pub fn addresses(&self) -> usize {
        self.lock().by_address.len()
    }
}

/// Who holds what an address holds: an IPv4 address itself, an IPv6
/// address by its /64 (one host usually has a whole /64 to pick from).
fn holder(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or_else(
            || IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
            IpAddr::V4,
        ),
        v4 @ IpAddr::V4(_) => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;

    fn book(per_address: usize, total: usize) -> Arc<AddressBook> {
        AddressBook::new(Limits {
            max_connections: total,
            max_connections_per_address: per_address,
            max_seats_per_address: 2,
            max_rooms_per_address: 1,
            ..ServerConfig::default().limits
        })
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 1, 0, last])
    }

    #[test]
    fn connections_are_capped_per_address_and_in_total() {
        let book = book(2, 3);
        let a1 = book.connect(ip(1)).expect("first");
        let _a2 = book.connect(ip(1)).expect("second");
        assert_eq!(book.connect(ip(1)).err(), Some(Refusal::TooManyFromAddress));
        let _b1 = book.connect(ip(2)).expect("another address");
        assert_eq!(book.connect(ip(3)).err(), Some(Refusal::TooManyConnections));
        drop(a1);
        assert!(
            book.connect(ip(1)).is_ok(),
            "a closed connection gives its share back"
        );
    }

    #[test]
    fn seats_and_rooms_are_capped_per_address_and_given_back() {
        let book = book(8, 8);
        let s1 = book.seat(ip(1)).expect("first seat");
        let _s2 = book.seat(ip(1)).expect("second seat");
        let refused = book.seat(ip(1)).expect_err("third seat");
        assert_eq!(refused.code, ErrorCode::AddressLimit);
        assert!(book.seat(ip(2)).is_ok(), "other addresses are not affected");
        let room = book.room(ip(1)).expect("one room");
        assert_eq!(
            book.room(ip(1)).map(|_| ()).map_err(|e| e.code),
            Err(ErrorCode::AddressLimit)
        );
        drop(room);
        drop(s1);
        assert!(book.room(ip(1)).is_ok());
        assert!(book.seat(ip(1)).is_ok());
    }

    #[test]
    fn ipv6_addresses_of_one_64_share_their_allowance() {
        let book = book(2, 8);
        let a: IpAddr = "2001:db8:1:2::1".parse().expect("an address");
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().expect("an address");
        let other: IpAddr = "2001:db8:1:3::1".parse().expect("an address");
        let _a = book.connect(a).expect("first");
        let _b = book.connect(b).expect("second");
        assert_eq!(book.connect(a).err(), Some(Refusal::TooManyFromAddress));
        assert!(book.connect(other).is_ok(), "another /64");
        let mapped: IpAddr = "::ffff:127.1.0.1".parse().expect("an address");
        assert_eq!(holder(mapped), ip(1));
    }

    #[test]
    fn an_address_with_nothing_open_is_forgotten() {
        let book = book(2, 2);
        let c = book.connect(ip(1)).expect("admitted");
        let s = book.seat(ip(1)).expect("seated");
        drop(c);
        assert_eq!(book.addresses(), 1);
        drop(s);
        assert_eq!(book.addresses(), 0);
        assert_eq!(book.connections(), 0);
        // Refusals leave nothing behind either.
        let _c1 = book.connect(ip(1));
        let _c2 = book.connect(ip(1));
        assert!(book.connect(ip(2)).is_err());
        assert_eq!(book.addresses(), 1);
    }
}
