"""What a question names (retrieve/questions.py): the day a packed recall opens the scenes of."""

import pytest

from tmem_graph.retrieve.questions import named_days



@pytest.mark.parametrize("question, window", [
    ("What movie did Joanna watch on 1 May, 2022?", ("2022-05-01", "2022-05-04")),
    ("Who did Maria have dinner with on May 3, 2023?", ("2023-05-03", "2023-05-06")),
    ("What did she find on the 8th of Sept. 2022?", ("2022-09-08", "2022-09-11")),
    ("What happened on 2023-05-08?", ("2023-05-08", "2023-05-11")),
    ("Between January 5, 2022 and 9 Jan 2022, what did they plan?", ("2022-01-05", "2022-01-12")),
    ("Where was John between August 11 and August 15 2023?", ("2023-08-11", "2023-08-18")),
    ("Where was the picture shared on December 1,2023 taken?", ("2023-12-01", "2023-12-04")),
    ("What did Jo do on May 5?", None),               # a day of no year
    ("What did Jo do in May 2023?", None),            # a month alone names no day
    ("What did Jo do on 31 February 2023?", None),    # not a day
    ("Where could we take Ana for dinner?", None),
    ("Anything on 9999-12-31?", None),                 # its window would pass the calendar's end
])
def test_a_question_names_a_window_of_days_from_its_first_day_to_two_days_after_its_last(question, window):
    assert named_days(question) == window
