/*
 * Checks of the u64 map (common/u64_map.c) on its own: put, find and
 * remove, the keys it cannot store, a removed key's tombstone (which keeps
 * the keys probed past it findable and is reused by the next insert), the
 * rebuild when the table fills, many keys removed and added again, and a
 * table whose size follows what is live however many keys came and went.
 * The table's layout is public (u64_map.h), so the checks read it where
 * the truth is in the slots.
 */
#include <stddef.h>

#include "common/u64_map.h"
#include "tests/unit/check.h"

#define MANY 100000u
#define WINDOW 10u /* keys live at once in the churn check */

/* A well-mixed key for the i-th of many, odd so that it is never 0. Two
 * equal keys (or UINT64_MAX) among them would show as a wrong count. */
static uint64_t key_of(uint64_t i)
{
    return ct_check_random(&i) | 1;
}

/* The value stored at `key`, or UINT64_MAX when it is absent. */
static uint64_t value_at(const struct ct_u64_map *m, uint64_t key)
{
    uint64_t *value = ct_u64_map_find(m, key);
    return value ? *value : UINT64_MAX;
}

/* The slot `key` would take in a table of its own: its home slot. */
static uint32_t home_slot(uint64_t key)
{
    struct ct_u64_map alone = {0};
    ct_u64_map_put(&alone, key, 0);
    uint32_t slot = (uint32_t)(ct_u64_map_find(&alone, key) - alone.values);
    ct_u64_map_free(&alone);
    return slot;
}

static void check_basics(void)
{
    struct ct_u64_map m = {0};
    uint64_t value = 7;
    ct_check(ct_u64_map_find(&m, 1) == NULL, "an empty map finds nothing");
    ct_check_u64((uint64_t)ct_u64_map_remove(&m, 1, &value), 0, "an empty map removes nothing");
    ct_u64_map_put(&m, 1, 10);
    ct_check_u64(value_at(&m, 1), 10, "a key put is found with its value");
    ct_u64_map_put(&m, 1, 11);
    ct_check_u64(value_at(&m, 1), 11, "putting a key again replaces its value");
    ct_check_u64(m.count, 1, "a replaced key is counted once");
    ct_u64_map_put(&m, 0, 5);
    ct_u64_map_put(&m, UINT64_MAX, 5);
    ct_check_u64(m.count, 1, "keys 0 and UINT64_MAX are not stored");
    ct_check(!ct_u64_map_find(&m, 0) && !ct_u64_map_find(&m, UINT64_MAX),
             "keys 0 and UINT64_MAX are never found");
    ct_check_u64((uint64_t)ct_u64_map_remove(&m, 2, &value), 0, "an absent key is not removed");
    ct_check_u64(value, 7, "removing an absent key leaves *value alone");
    ct_check_u64((uint64_t)ct_u64_map_remove(&m, 1, &value), 1, "a present key is removed");
    ct_check_u64(value, 11, "remove gives the removed key's value");
    ct_check(ct_u64_map_find(&m, 1) == NULL, "a removed key is not found");
    ct_check_u64(m.count, 0, "a removed key is not counted");
    ct_check_u64((uint64_t)ct_u64_map_remove(&m, 1, &value), 0, "a key is removed only once");
    ct_u64_map_free(&m);
    ct_check(m.capacity == 0 && m.keys == NULL && !ct_u64_map_find(&m, 1),
             "a freed map is empty again");
}

/* Two keys with one home slot: the second lies past the first, and must
 * stay findable when the first is removed. */
static void check_tombstones(void)
{
    uint64_t a = 1, b = 2, value;
    uint32_t home = home_slot(a);
    while (home_slot(b) != home)
        b++;
    struct ct_u64_map m = {0};
    ct_u64_map_put(&m, a, 100);
    ct_u64_map_put(&m, b, 200);
    uint32_t slot_b = (uint32_t)(ct_u64_map_find(&m, b) - m.values);
    ct_check_u64(slot_b, (home + 1) & (m.capacity - 1), "a colliding key takes the next slot");
    ct_u64_map_remove(&m, a, &value);
    ct_check_u64(m.keys[home], UINT64_MAX, "a removed key's slot holds the tombstone");
    ct_check_u64(m.used, 2, "a tombstone still counts as used");
    ct_check_u64(value_at(&m, b), 200, "a key probed past a tombstone is still found");
    ct_u64_map_put(&m, a, 101);
    ct_check_u64((uint64_t)(ct_u64_map_find(&m, a) - m.values), home,
                 "a key put again takes the tombstone's slot");
    ct_check_u64(m.used, 2, "reusing a tombstone uses no new slot");
    ct_check(m.count == 2 && value_at(&m, a) == 101 && value_at(&m, b) == 200,
             "both keys are found with their values after the tombstone is reused");
    ct_u64_map_free(&m);
}

/* 64 slots hold 32 keys; the 33rd rebuilds at the smallest power of two
 * of at least four times the live keys (4 * 33 -> 256). */
static void check_rebuild(void)
{
    struct ct_u64_map m = {0};
    for (uint64_t i = 0; i < 32; i++)
        ct_u64_map_put(&m, key_of(i), i);
    ct_check_u64(m.capacity, 64, "32 keys fit in the first 64 slots");
    ct_u64_map_put(&m, key_of(32), 32);
    ct_check_u64(m.capacity, 256, "the 33rd key rebuilds the table at 256 slots");
    ct_check_u64(m.used, 33, "a rebuild leaves no tombstones");
    uint64_t wrong = 0;
    for (uint64_t i = 0; i <= 32; i++)
        wrong += value_at(&m, key_of(i)) != i;
    ct_check_u64(wrong, 0, "every key survives the rebuild with its value (wrong ones)");
    ct_u64_map_free(&m);
}

static void check_many(void)
{
    struct ct_u64_map m = {0};
    uint64_t wrong = 0, removed = 0, value;
    for (uint64_t i = 0; i < MANY; i++)
        ct_u64_map_put(&m, key_of(i), i);
    ct_check_u64(m.count, MANY, "%u keys are all counted", MANY);
    for (uint64_t i = 0; i < MANY; i++)
        wrong += value_at(&m, key_of(i)) != i;
    ct_check_u64(wrong, 0, "%u keys are all found with their values (wrong ones)", MANY);
    ct_check(2 * m.used <= m.capacity, "the table stays at most half full");
    for (uint64_t i = 1; i < MANY; i += 2)
        removed += ct_u64_map_remove(&m, key_of(i), &value) && value == i;
    ct_check_u64(removed, MANY / 2, "every odd key is removed, with its value");
    ct_check_u64(m.count, MANY / 2, "half the keys are left");
    wrong = 0;
    for (uint64_t i = 0; i < MANY; i++)
        wrong += value_at(&m, key_of(i)) != (i % 2 ? UINT64_MAX : i);
    ct_check_u64(wrong, 0, "the even keys are found and the odd ones not (wrong ones)");
    for (uint64_t i = 1; i < MANY; i += 2)
        ct_u64_map_put(&m, key_of(i), i + MANY);
    wrong = 0;
    for (uint64_t i = 0; i < MANY; i++)
        wrong += value_at(&m, key_of(i)) != (i % 2 ? i + MANY : i);
    ct_check_u64(wrong, 0, "removed keys added again are found with their new values (wrong)");
    ct_check_u64(m.count, MANY, "all the keys are counted again");
    ct_u64_map_free(&m);
}

/* WINDOW keys live at a time, MANY put and removed in turn: the tombstones
 * are swept by rebuilds sized by the live keys, so the table never grows
 * past its first 64 slots (4 * (WINDOW + 1) <= 64). */
static void check_churn(void)
{
    struct ct_u64_map m = {0};
    uint64_t largest = 0, value, lost = 0;
    for (uint64_t i = 0; i < MANY; i++) {
        ct_u64_map_put(&m, key_of(i), i);
        if (i >= WINDOW)
            lost += !ct_u64_map_remove(&m, key_of(i - WINDOW), &value) || value != i - WINDOW;
        if (m.capacity > largest)
            largest = m.capacity;
    }
    ct_check_u64(lost, 0, "each key of the churn is removed with its value (lost ones)");
    ct_check_u64(largest, 64, "the table's size follows the live keys, not the keys seen");
    ct_check_u64(m.count, WINDOW, "the last %u keys are live", WINDOW);
    uint64_t wrong = 0;
    for (uint64_t i = MANY - 2 * WINDOW; i < MANY; i++)
        wrong += value_at(&m, key_of(i)) != (i >= MANY - WINDOW ? i : UINT64_MAX);
    ct_check_u64(wrong, 0, "the live keys are found and the removed ones not (wrong ones)");
    ct_u64_map_free(&m);
}

int main(void)
{
    check_basics();
    check_tombstones();
    check_rebuild();
    check_many();
    check_churn();
    return ct_check_finish();
}
