// Every trigger view of an item carries the label ItemView, which index item_view_embedding covers
// (see 0058). store/item_triggers_merge sets it; this labels views written before. No parameters.
MATCH (v:Trigger)
WHERE v.family = 'item' AND NOT v:ItemView
CALL (v) { SET v:ItemView } IN TRANSACTIONS OF 10000 ROWS
